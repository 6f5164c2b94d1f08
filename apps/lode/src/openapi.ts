import { RequestMethod, type INestApplication } from '@nestjs/common';
import { METHOD_METADATA, PARAMTYPES_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { ModulesContainer } from '@nestjs/core';
import {
  ApiBody,
  ApiExtension,
  ApiQuery,
  DECORATORS,
  DocumentBuilder,
  SwaggerModule,
  type OpenAPIObject,
  type OperationObject,
  type ParameterObject,
  type RequestBodyObject,
} from '@nestjs/swagger';
import { getMetadataStorage } from 'class-validator';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { LOCAL_SCHEMAS, NESTED_PROPERTIES, responseOf } from './openapi-responses';

/** Where the document and the reference page are served (outside the `/api/v4` prefix's routing, as raw routes). */
export const OPENAPI_JSON = '/api/v4/openapi.json';
export const OPENAPI_PAGE = '/api/docs';
export const PRIVATE_TOKEN_SCHEME = 'private_token';

/** The property Nest's swagger CLI plugin (or its generated metadata) puts on a DTO class. */
const PLUGIN_METADATA = '_OPENAPI_METADATA_FACTORY';

type Handler = (...args: unknown[]) => unknown;
type Metatype = { prototype: object; name: string };

/**
 * Serves the OpenAPI 3.1 document at `GET /api/v4/openapi.json` and Swagger UI at `/api/docs`. The
 * document is built on the first request, not here, so it describes every route however the app was
 * assembled, and costs nothing to a process nobody asks.
 */
export function setupOpenApi(app: INestApplication): void {
  let document: OpenAPIObject | undefined;
  const build = () => (document ??= buildOpenApiDocument(app));
  SwaggerModule.setup(OPENAPI_PAGE, app, build, {
    jsonDocumentUrl: OPENAPI_JSON,
    raw: ['json'],
    // The page reads the document from this server (no petstore default, no remote validator badge).
    swaggerOptions: { validatorUrl: null },
    customSiteTitle: 'Lode API (GitLab REST API v4)',
  });
}

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  describeGitlabParams(app);
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Lode')
    .setDescription(
      "GitLab's REST API v4 as Lode serves it. Parameters are read from the query string, a JSON body, a form " +
        'or a multipart body alike, as GitLab does; an id path parameter is a number or a URL-encoded full path.',
    )
    .setVersion(packageVersion())
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'PRIVATE-TOKEN',
        description: "A personal access token or an impersonation token, as GitLab's PRIVATE-TOKEN header",
      },
      PRIVATE_TOKEN_SCHEME,
    )
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', description: 'The same token as `Authorization: Bearer`' },
      'bearer',
    )
    .build();
  const doc = SwaggerModule.createDocument(app, config, { ignoreGlobalPrefix: false });
  // A token is optional on public reads and required on the rest: either scheme, or none.
  doc.security = [{ [PRIVATE_TOKEN_SCHEME]: [] }, { bearer: [] }, {}];
  addResponses(doc);
  return doc;
}

/**
 * Handlers read GitLab's parameters with `@GitlabParams()`, a custom decorator swagger does not know.
 * Its DTO (whose properties the CLI plugin has described from their class-validator decorators)
 * becomes the query parameters of a read and the body of a write, in the three encodings GitLab takes.
 */
function describeGitlabParams(app: INestApplication): void {
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const type = wrapper.metatype as Metatype | null;
      if (!type) continue;
      const proto = type.prototype;
      for (const name of Object.getOwnPropertyNames(proto)) {
        // Read the descriptor, not the property: a controller's getter (its settings) needs an instance.
        const descriptor = Object.getOwnPropertyDescriptor(proto, name)!;
        const handler = descriptor.value as Handler | undefined;
        if (name === 'constructor' || typeof handler !== 'function') continue;
        if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
        if (described.has(handler)) continue;
        described.add(handler);
        const dto = gitlabParamsType(type, proto, name);
        if (dto) {
          const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod;
          const reads =
            method === RequestMethod.GET || method === RequestMethod.DELETE || method === RequestMethod.HEAD;
          if (reads) {
            ApiQuery({ type: dto as never, required: false })(proto, name, descriptor);
            queryDtos.push(dto);
            ApiExtension(QUERY_DTO, queryDtos.length - 1)(proto, name, descriptor);
          } else ApiBody({ type: dto as never, required: false })(proto, name, descriptor);
        }
        // Every DTO the operation names, this one or an `@ApiBody({ type })` of a handler that validates itself.
        const named = (Reflect.getMetadata(DECORATORS.API_PARAMETERS, handler) ?? []) as { type?: unknown }[];
        for (const p of named) if (typeof p.type === 'function') refineDtoMetadata(p.type as Metatype);
      }
    }
  }
}
const described = new WeakSet<Handler>();
/** The DTOs spread into query parameters, by the index an operation's QUERY_DTO extension holds. */
const queryDtos: Metatype[] = [];
const QUERY_DTO = 'x-lode-query-dto';

/**
 * Swagger spreads a query DTO into parameters but drops each property's `enum` on the way: put back
 * what the plugin (and refineDtoMetadata) said of them.
 */
function restoreQueryEnums(op: OperationObject): void {
  const extended = op as unknown as Record<string, unknown>;
  const index = extended[QUERY_DTO];
  delete extended[QUERY_DTO];
  const dto = typeof index === 'number' ? queryDtos[index] : undefined;
  if (!dto) return;
  const described: Record<string, { enum?: unknown[] }> = {};
  for (let type: unknown = dto; typeof type === 'function' && type !== Function.prototype;) {
    const own = Object.getOwnPropertyDescriptor(type, PLUGIN_METADATA)?.value as (() => object) | undefined;
    if (own) for (const [k, v] of Object.entries(own())) described[k] ??= v as { enum?: unknown[] };
    type = Object.getPrototypeOf(type);
  }
  for (const p of op.parameters ?? []) {
    const param = p as ParameterObject;
    const values = param.in === 'query' ? described[param.name]?.enum : undefined;
    if (values) param.schema = { ...(param.schema as object), enum: values };
  }
}

/**
 * Two things the plugin's class-validator shim leaves out, added to what it described of a DTO (and of
 * the DTOs it extends): `@IsIn([...])` and `@IsEnum()` become the property's `enum`; and
 * `@AtLeastOneOf([...]) readonly _password?: never`, a check across fields hung on a property no client
 * sends, is left out (the plugin describes it as an untyped property, which swagger refuses).
 */
function refineDtoMetadata(dto: Metatype): void {
  for (let type: unknown = dto; typeof type === 'function' && type !== Function.prototype;) {
    const own = Object.getOwnPropertyDescriptor(type, PLUGIN_METADATA)?.value as
      (() => Record<string, Record<string, unknown>>) | undefined;
    if (own && !refined.has(own)) {
      const choices = enumsOf(type as Metatype);
      const described = () =>
        Object.fromEntries(
          Object.entries(own())
            .filter(([key]) => !key.startsWith('_'))
            .map(([key, meta]) => [key, choices.has(key) ? { ...meta, enum: choices.get(key) } : meta]),
        );
      refined.add(described);
      Object.defineProperty(type, PLUGIN_METADATA, { value: described, configurable: true, writable: true });
    }
    type = Object.getPrototypeOf(type);
  }
}
const refined = new WeakSet<() => object>();

/** The values `@IsIn` or `@IsEnum` allow, by property, declared on this class itself. */
function enumsOf(type: Metatype): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  const own = getMetadataStorage()
    .getTargetValidationMetadatas(type as never, '', true, false)
    .filter((m) => m.target === type);
  for (const m of own) {
    const [allowed] = (m.constraints ?? []) as unknown[];
    if (m.name === 'isIn' && Array.isArray(allowed)) out.set(m.propertyName, allowed);
    if (m.name === 'isEnum' && allowed && typeof allowed === 'object')
      out.set(m.propertyName, [...new Set(Object.values(allowed))]);
  }
  return out;
}

/** The DTO class of a handler's `@GitlabParams()` argument (a custom argument typed with a described class). */
function gitlabParamsType(type: Metatype, proto: object, name: string): Metatype | undefined {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, type, name) ?? {}) as Record<string, { index: number }>;
  const types = (Reflect.getMetadata(PARAMTYPES_METADATA, proto, name) ?? []) as unknown[];
  for (const [key, arg] of Object.entries(args)) {
    if (!key.includes('__customRouteArgs__')) continue;
    const t = types[arg.index] as Metatype | undefined;
    if (typeof t === 'function' && PLUGIN_METADATA in t) return t;
  }
  return undefined;
}

/** Each operation's answers: its success status with GitLab's entity, and GitLab's error bodies. */
function addResponses(doc: OpenAPIObject): void {
  const components = (doc.components ??= {});
  const schemas = (components.schemas ??= {});
  Object.assign(schemas, gitlabEntitySchemas(), LOCAL_SCHEMAS, {
    Error: {
      type: 'object',
      description: 'GitLab\'s error body: `{"message": ...}` (or `{"error": ...}` for a parameter Grape refused)',
      properties: { message: {}, error: { type: 'string' } },
    },
  });
  for (const [name, nested] of Object.entries(NESTED_PROPERTIES)) {
    const properties = (schemas[name] as { properties?: Record<string, { type?: unknown; description?: string }> })
      ?.properties;
    if (!properties) continue;
    for (const [key, schema] of Object.entries(nested)) {
      const was = properties[key];
      if (!was) continue;
      const nullable = Array.isArray(was.type) && was.type.includes('null');
      properties[key] = {
        ...(nullable ? { oneOf: [schema, { type: 'null' }] } : schema),
        ...(was.description ? { description: was.description } : {}),
      };
    }
  }
  const error = (description: string) => ({
    description,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  });
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch', 'head'] as const) {
      const op = item[method];
      if (!op) continue;
      declarePathParameters(path, op);
      restoreQueryEnums(op);
      acceptEveryEncoding(op);
      // The status swagger read from @HttpCode (or Nest's default: 201 for a POST, 200 otherwise).
      const status = Object.keys(op.responses ?? {}).find((s) => s.startsWith('2')) ?? '200';
      const answer = responseOf(method.toUpperCase(), path);
      const empty = status === '204' || (method === 'delete' && !answer) || method === 'head';
      const schema = empty ? undefined : answer?.schema;
      // A route whose answer depends on the caller (an administrator sees UserAdmin) offers each shape.
      const ref = answer?.oneOf
        ? { oneOf: [schema, ...answer.oneOf].map((s) => ({ $ref: `#/components/schemas/${s}` })) }
        : { $ref: `#/components/schemas/${schema}` };
      op.responses = {
        [answer?.status ?? status]: {
          description: answer?.description ?? (empty ? 'No content' : 'Success'),
          ...(schema
            ? {
                content: {
                  [answer?.media ?? 'application/json']: { schema: answer?.list ? { type: 'array', items: ref } : ref },
                },
              }
            : {}),
        },
        '400': error('A parameter is missing or invalid'),
        '401': error('No valid token where one is required'),
        '403': error('The token may not do this'),
        '404': error('Not found, or not visible to the caller'),
        ...(method === 'get' || method === 'head' ? {} : { '409': error('A conflicting change') }),
      };
    }
  }
}

/** Express's `*path` (a wildcard of several segments) is a path parameter swagger does not list. */
function declarePathParameters(path: string, op: OperationObject): void {
  const declared = new Set(
    (op.parameters ?? []).filter((p) => 'in' in p && p.in === 'path').map((p) => (p as ParameterObject).name),
  );
  for (const [, name] of path.matchAll(/\{(\w+)\}/g)) {
    if (declared.has(name)) continue;
    (op.parameters ??= []).push({ name, in: 'path', required: true, schema: { type: 'string' } });
  }
}

/** GitLab reads a body as JSON, a form or multipart alike: every body is offered in the three. */
function acceptEveryEncoding(op: OperationObject): void {
  const body = op.requestBody as RequestBodyObject | undefined;
  const json = body?.content?.['application/json'];
  if (!body || !json) return;
  body.content['application/x-www-form-urlencoded'] ??= json;
  body.content['multipart/form-data'] ??= json;
}

/**
 * GitLab's entities as the contract tests pin them (test/contract/schemas/<name>.json: exactly these
 * keys, each of these types), so the document says what the serializers are held to.
 */
function gitlabEntitySchemas(): Record<string, object> {
  const dir = findUp('test/contract/schemas');
  const out: Record<string, object> = {};
  if (!dir) return out;
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const spec = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
      description?: string;
      fields: Record<string, string>;
      optional?: Record<string, string>;
      optional_notes?: Record<string, string>;
    };
    const properties: Record<string, object> = {};
    const typeOf = (types: string) => {
      const list = types.split('|');
      return list.length === 1 ? list[0] : list;
    };
    for (const [key, types] of Object.entries(spec.fields)) properties[key] = { type: typeOf(types) };
    // The keys an answer carries only sometimes (a project's `open_issues_count` when issues are
    // enabled, `owner` in a personal namespace...): described, not required, with when they appear.
    for (const [key, types] of Object.entries(spec.optional ?? {})) {
      const note = spec.optional_notes?.[key];
      properties[key] = { type: typeOf(types), ...(note ? { description: note } : {}) };
    }
    out[schemaName(file.replace(/\.json$/, ''))] = {
      type: 'object',
      description: spec.description,
      required: Object.keys(spec.fields),
      additionalProperties: false,
      properties,
    };
  }
  return out;
}

/** `user-admin` -> `UserAdmin`. */
export function schemaName(shape: string): string {
  return shape.replace(/(^|-)(\w)/g, (_, __, c: string) => c.toUpperCase());
}

/** A directory of the checkout (or the image, which copies it) from the working directory or the running script up. */
function findUp(relative: string): string | undefined {
  const starts = [process.cwd(), process.argv[1] ? dirname(process.argv[1]) : undefined].filter(Boolean) as string[];
  for (const start of starts) {
    for (let dir = start; ; dir = dirname(dir)) {
      if (existsSync(join(dir, relative))) return join(dir, relative);
      if (dirname(dir) === dir) break;
    }
  }
  return undefined;
}

function packageVersion(): string {
  const file = findUp('package.json');
  try {
    return file ? (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}
