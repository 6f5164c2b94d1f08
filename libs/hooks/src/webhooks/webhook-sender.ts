import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { checkHookUrl, pinnedLookup } from '../delivery/url-guard';

export interface WebhookRequest {
  url: string;
  /** Sent as `X-Gitlab-Token` when set. */
  token: string | null;
  enableSslVerification: boolean;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowLocal: boolean;
}

/** Why an attempt got no answer, in words that name no address, port or resolver result. */
export type DeliveryFailure = 'refused' | 'connection' | 'timeout' | 'tls';

/** What one attempt came to: the receiver's status, or why there was none (`error` is for the server's log only). */
export interface WebhookOutcome {
  status: number | null;
  error: string | null;
  durationMs: number;
  failure?: DeliveryFailure;
  /** The receiver's answer headers (empty without an answer), for the delivery log. */
  responseHeaders?: Record<string, string>;
  /** The first RESPONSE_BODY_LOGGED bytes of the receiver's answer, for the delivery log. */
  responseBody?: string;
}

/** What the delivery log keeps of an answer's body (later GitLab's `web_hook_logs` keep 8 KB too). */
export const RESPONSE_BODY_LOGGED = 8 * 1024;

/** The receiver's answer is read (so the connection ends cleanly) but only this much is kept. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * One POST to a hook's URL. The SSRF rules run again on the address the name resolves to now, and
 * the socket connects to exactly that address (no DNS rebinding between check and connect).
 * Redirects are not followed (a 3xx is the answer). One timeout covers connect, send and answer.
 */
export async function sendWebhook(req: WebhookRequest): Promise<WebhookOutcome> {
  const started = performance.now();
  let responseHeaders: Record<string, string> = {};
  const kept: Buffer[] = [];
  let keptBytes = 0;
  const done = (status: number | null, error: string | null, failure?: DeliveryFailure): WebhookOutcome => ({
    status,
    error,
    durationMs: Math.round(performance.now() - started),
    ...(failure ? { failure } : {}),
    responseHeaders,
    // A multi-byte character cut at the limit becomes U+FFFD: the log shows text, never half a byte.
    responseBody: Buffer.concat(kept).subarray(0, RESPONSE_BODY_LOGGED).toString('utf8'),
  });
  const verdict = await checkHookUrl(req.url, { allowLocal: req.allowLocal });
  if (!verdict.ok) return done(null, `refused: ${verdict.reason}`, verdict.unresolved ? 'connection' : 'refused');
  const { url, addresses } = verdict;
  const headers: Record<string, string> = { ...req.headers, 'Content-Length': String(Buffer.byteLength(req.body)) };
  if (req.token) headers['X-Gitlab-Token'] = req.token;
  // User info in the URL is the receiver's basic auth (GitLab allows it); it never goes in the request line.
  if (url.username || url.password)
    headers.Authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  const https = url.protocol === 'https:';
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return new Promise<WebhookOutcome>((resolve) => {
    let settled = false;
    let timedOut = false;
    const finish = (status: number | null, error: string | null, failure?: DeliveryFailure) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(status, error, failure));
    };
    const request = (https ? httpsRequest : httpRequest)(
      {
        protocol: url.protocol,
        hostname: host,
        port: url.port || (https ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers,
        lookup: pinnedLookup(addresses),
        agent: false,
        ...(https ? { servername: host, rejectUnauthorized: req.enableSslVerification } : {}),
      },
      (res: IncomingMessage) => {
        let read = 0;
        responseHeaders = Object.fromEntries(
          Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v ?? '')]),
        );
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (keptBytes < RESPONSE_BODY_LOGGED) {
            kept.push(chunk);
            keptBytes += chunk.length;
          }
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        res.on('error', () => finish(res.statusCode ?? null, null));
        res.on('close', () => finish(res.statusCode ?? null, null));
        res.on('end', () => finish(res.statusCode ?? null, null));
      },
    );
    const timer = setTimeout(() => {
      timedOut = true;
      request.destroy(new Error(`timed out after ${req.timeoutMs} ms`));
    }, req.timeoutMs);
    request.on('error', (err: Error) =>
      finish(null, err.message, timedOut ? 'timeout' : isTlsError(err) ? 'tls' : 'connection'),
    );
    request.end(req.body);
  });
}

/** Certificate and handshake failures, as Node reports them (`CERT_HAS_EXPIRED`, `ERR_SSL_...`, `EPROTO`...). */
function isTlsError(err: NodeJS.ErrnoException): boolean {
  const code = err.code ?? '';
  return /CERT|SSL|TLS|SIGNATURE|EPROTO/i.test(code) || /certificate|ssl|tls/i.test(err.message);
}

/**
 * What the hook's delivery log, which maintainers read, says about an attempt: `HTTP <status>` for a
 * receiver's non-2xx answer, else a generic reason (`connection failed`, `TLS error`, or the
 * timeout Lode applied). Resolver answers, addresses, ports and socket errors stay in the
 * server's log, never in the delivery log.
 */
export function deliveryReason(o: WebhookOutcome): string | null {
  if (o.status !== null) return delivered(o) ? null : `HTTP ${o.status}`;
  switch (o.failure) {
    case 'timeout':
      return o.error; // "timed out after <LODE_WEBHOOK_TIMEOUT> ms": Lode's own limit, nothing of the network
    case 'tls':
      return 'TLS error';
    // `refused` is an address the SSRF rules refuse now: naming that would tell what an internal name
    // resolves to. Without a named failure nothing more is known either.
    case 'connection':
    case 'refused':
    case undefined:
      return 'connection failed';
  }
}

/** GitLab counts 2xx as delivered; anything else (also a redirect) is a failed attempt. */
export const delivered = (o: WebhookOutcome) => o.status !== null && o.status >= 200 && o.status < 300;
