/* global document, window, SwaggerUIBundle */
// The Ballast docs page: Swagger UI over the appliance's own OpenAPI document, nothing remote.
(function () {
  var root = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: root.getAttribute('data-openapi'),
    domNode: root,
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    // no call to validator.swagger.io (the page works offline)
    validatorUrl: null,
    persistAuthorization: false,
    tryItOutEnabled: false,
  });
})();
