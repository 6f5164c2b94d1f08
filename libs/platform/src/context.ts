import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Who is acting. `external` marks GitLab's external users (no access to internal projects they are not
 * members of); `sudoBy` is the administrator behind a sudo; `impersonatedBy` the one who made an impersonation token.
 */
export interface Actor {
  id: number;
  username: string;
  isAdmin: boolean;
  external: boolean;
  tokenId?: number;
  scopes: string[];
  impersonation: boolean;
  sudoBy?: number;
  impersonatedBy?: number;
}

/** Per-request facts that every appended event records in its metadata. */
export interface RequestContext {
  requestId: string;
  actor?: Actor;
  /** The client's address: Express' `req.ip`, so X-Forwarded-For counts only from LODE_TRUSTED_PROXIES. */
  ip?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

export const RequestContexts = {
  run<T>(ctx: RequestContext, fn: () => T): T {
    return storage.run(ctx, fn);
  },
  current(): RequestContext | undefined {
    return storage.getStore();
  },
};
