/* global document, window, requestAnimationFrame, CSS, SwaggerUIBundle */
// The Ballast docs page: Swagger UI over the appliance's own OpenAPI document, nothing remote.
// Its additions (this file and docs.css, no inline script or style: the page's CSP forbids them):
// the filter box searches operations, and a sidebar lists the areas (tags).
(function () {
  var root = document.getElementById('swagger-ui');

  /** Whether an operation (Swagger UI's Immutable Map: path, method, operation) has `phrase` (lower case). */
  function operationMatches(op, phrase) {
    var operation = op.get('operation');
    var texts = [op.get('path'), operation && operation.get('operationId'), operation && operation.get('summary')];
    for (var i = 0; i < texts.length; i++)
      if (texts[i] && String(texts[i]).toLowerCase().indexOf(phrase) !== -1) return true;
    return false;
  }

  /**
   * Swagger UI's filter (`filter: true`) matches tags and paths; this one also matches an
   * operation's operationId and summary. A tag whose name has the phrase keeps all its operations,
   * any other keeps those that match, and a tag left with none is hidden.
   */
  function opsFilter(taggedOps, phrase) {
    var q = String(phrase || '')
      .trim()
      .toLowerCase();
    if (!q) return taggedOps;
    return taggedOps
      .map(function (tagObj, tag) {
        if (String(tag).toLowerCase().indexOf(q) !== -1) return tagObj;
        var ops = tagObj && tagObj.get ? tagObj.get('operations') : null;
        if (!ops || !ops.filter) return null;
        var kept = ops.filter(function (op) {
          return op && op.get && operationMatches(op, q);
        });
        return kept.size > 0 ? tagObj.set('operations', kept) : null;
      })
      .filter(function (tagObj) {
        return tagObj !== null;
      });
  }

  /** Scrolls to a tag's section, opened; a filter that hides it is cleared first. */
  function goToTag(ui, tag) {
    var selector = '.opblock-tag[data-tag="' + CSS.escape(tag) + '"]';
    if (!document.querySelector(selector)) ui.layoutActions.updateFilter('');
    // shown (expanded); with deepLinking this also puts #/<tag> in the address bar
    ui.layoutActions.show(['operations-tag', tag], true);
    // again for a few frames: the sections a cleared filter brings back may still be laid out
    var frames = 0;
    (function scroll() {
      var el = document.querySelector(selector);
      if (el) el.scrollIntoView({ block: 'start' });
      if (++frames < 10) requestAnimationFrame(scroll);
    })();
  }

  /** The sidebar: one link per tag of the document, in its order. */
  function addNav(ui) {
    var tags = ui.specSelectors.specJson().get('tags');
    if (!tags || !tags.size || document.querySelector('.docs-nav')) return;
    var nav = document.createElement('nav');
    nav.className = 'docs-nav';
    nav.setAttribute('aria-label', 'API areas');
    var title = document.createElement('p');
    title.className = 'docs-nav-title';
    title.textContent = 'Areas';
    var list = document.createElement('ul');
    tags.forEach(function (t) {
      var name = t.get('name');
      var a = document.createElement('a');
      a.href = '#/' + encodeURIComponent(name);
      a.textContent = name;
      a.addEventListener('click', function (e) {
        e.preventDefault();
        goToTag(ui, name);
      });
      var item = document.createElement('li');
      item.appendChild(a);
      list.appendChild(item);
    });
    nav.appendChild(title);
    nav.appendChild(list);
    document.body.insertBefore(nav, root);
    document.body.classList.add('has-docs-nav');
  }

  window.ui = SwaggerUIBundle({
    url: root.getAttribute('data-openapi'),
    domNode: root,
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    // the search box above the operations (see opsFilter)
    filter: true,
    plugins: [
      function () {
        return { fn: { opsFilter: opsFilter } };
      },
    ],
    // no call to validator.swagger.io (the page works offline)
    validatorUrl: null,
    persistAuthorization: false,
    tryItOutEnabled: false,
    onComplete: function () {
      var ui = window.ui;
      addNav(ui);
      var input = document.querySelector('.operation-filter-input');
      if (input) {
        input.placeholder = 'Search operations: path, operation id, summary or area';
        input.setAttribute('aria-label', 'Search operations');
      }
    },
  });
})();
