/**
 * Thrown by pure parsers when command output or a config file does not have the expected shape.
 * The route contract turns it into a 502 (the system answered something we cannot read), naming
 * the parser and the offending line, never the whole input (it may hold secrets).
 */
export class ParseError extends Error {
  readonly parser: string;
  readonly line?: number;
  constructor(parser: string, message: string, line?: number) {
    super(line === undefined ? `${parser}: ${message}` : `${parser}: line ${line}: ${message}`);
    this.name = 'ParseError';
    this.parser = parser;
    this.line = line;
  }
}
