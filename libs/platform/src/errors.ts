/**
 * The few domain errors. Only `http/gitlab-error.filter.ts` turns them into GitLab's bodies,
 * so deciders and handlers never think about HTTP.
 */
export class DomainError extends Error {}

/** 404 `{"message":"404 <Resource> Not Found"}`; `Not found` (no resource) gives GitLab's ActiveRecord miss text. */
export class NotFound extends DomainError {
  constructor(readonly resource?: string) {
    super(resource ? `404 ${resource} Not Found` : '404 Not found');
  }
}

/** 401 `{"message":"401 Unauthorized"}`. */
export class Unauthorized extends DomainError {
  constructor() {
    super('401 Unauthorized');
  }
}

/** 403 `{"message":"403 Forbidden"}` or `"403 Forbidden - <reason>"`. */
export class Forbidden extends DomainError {
  constructor(readonly reason?: string) {
    super(reason ? `403 Forbidden - ${reason}` : '403 Forbidden');
  }
}

/** 403 with the OAuth-style body GitLab gives a token that lacks a scope. */
export class InsufficientScope extends DomainError {
  constructor(readonly scopes: string[]) {
    super('insufficient_scope');
  }
}

/** 409 `{"message": <message>}`; the message is a string or GitLab's field map. */
export class Conflict extends DomainError {
  constructor(readonly body: string | Record<string, string[]>) {
    super(typeof body === 'string' ? body : JSON.stringify(body));
  }
}

/** 400 `{"message":{"<field>":["<text>"]}}`: a model validation failure. */
export class Invalid extends DomainError {
  constructor(readonly fields: Record<string, string[]>) {
    super(JSON.stringify(fields));
  }
}

/** 400 `{"error":"<text>"}`: a parameter validation failure, as Grape words it. */
export class BadParameter extends DomainError {
  constructor(readonly error: string) {
    super(error);
  }
}

/** 400 `{"message":"<text>"}`: GitLab's `render_api_error!` with a sentence. */
export class BadRequestMessage extends DomainError {}

/** 422 `{"message":["<full message>", ...]}`: GitLab's `render_api_error!(record.errors.full_messages, 422)`. */
export class RecordInvalid extends DomainError {
  constructor(readonly messages: string[]) {
    super(messages.join(', '));
  }
}

/**
 * `{"message": <message>}` with the status given: GitLab's `render_api_error!(message, status)`, whose
 * message is passed as it is, a sentence or a list of the model's full messages.
 */
export class ApiError extends DomainError {
  constructor(
    readonly status: 400 | 409 | 422,
    readonly body: string | string[],
  ) {
    super(typeof body === 'string' ? body : body.join(', '));
  }
}

/** 422 `{"error":"<text>"}`. */
export class Unprocessable extends DomainError {
  /** `detail`: a `message` beside GitLab's `error`, for a cause GitLab's one-line answer hides. */
  constructor(
    readonly error: string,
    readonly detail?: string,
  ) {
    super(error);
  }
}

/** 304 with no body: GitLab's answer to a no-op such as starring twice. */
export class NotModified extends DomainError {
  constructor() {
    super('304 Not Modified');
  }
}

/**
 * 405 `{"error":"Keyset pagination is not yet available for this type of request"}`: GitLab's answer
 * (12.x and later; the feature-flag era said 501) to `pagination=keyset` on a list, or in an order,
 * that has no keyset.
 */
export class KeysetUnavailable extends DomainError {
  constructor() {
    super('Keyset pagination is not yet available for this type of request');
  }
}

/** 413: a body over a configured limit. */
export class PayloadTooLarge extends DomainError {
  constructor() {
    super('413 Request Entity Too Large');
  }
}

/** 414 `{"message":"414 Request-URI Too Large"}`: nginx's answer in front of GitLab to a request line past 8 KB. */
export class UriTooLong extends DomainError {
  constructor() {
    super('414 Request-URI Too Large');
  }
}

/** 429 `{"message":"429 Too Many Requests"}`: a request limit (LODE_RATE_LIMIT_*) was reached; `retryAfter` in seconds. */
export class TooManyRequests extends DomainError {
  constructor(readonly retryAfter: number) {
    super('429 Too Many Requests');
  }
}

/**
 * 503 with `Retry-After`: a dependency (PostgreSQL) is not answering. The reason is for the log;
 * the body is Grape's `{"message":"503 Service Unavailable"}`.
 */
export class Unavailable extends DomainError {
  constructor(
    readonly reason: string,
    readonly retryAfter = 5,
  ) {
    super('503 Service Unavailable');
  }
}

/** Collects model validation messages field by field, GitLab style. */
export class FieldErrors {
  private readonly fields: Record<string, string[]> = {};
  add(field: string, message: string): this {
    (this.fields[field] ??= []).push(message);
    return this;
  }
  get empty(): boolean {
    return Object.keys(this.fields).length === 0;
  }
  throwIfAny(): void {
    if (!this.empty) throw new Invalid(this.fields);
  }
}
