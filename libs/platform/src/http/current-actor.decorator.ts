import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Request } from 'express';
import type { Actor } from '../context';

/** The authenticated caller (after sudo), or undefined for an anonymous request. */
export const CurrentActor = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): Actor | undefined =>
    (ctx.switchToHttp().getRequest<Request>() as Request & { actor?: Actor }).actor,
);

export const ACCESS_KEY = 'lode:access';
export type RouteAccess = 'authenticated' | 'admin';

/** The route needs a signed-in caller: 401 otherwise. */
export const Authenticated = () => SetMetadata(ACCESS_KEY, 'authenticated' satisfies RouteAccess);
/** The route is for administrators: 401 anonymous, 403 others. */
export const AdminOnly = () => SetMetadata(ACCESS_KEY, 'admin' satisfies RouteAccess);

export const REFUSED_CREDENTIALS_KEY = 'lode:refused_credentials';
/**
 * Credentials the route's caller sent that are refused (an unknown, revoked or expired token, a blocked
 * user's, a throttled address) leave the caller anonymous instead of answering 401 or 403: the route
 * answers anonymous callers itself, the same way whatever was sent (/-/metrics' 404 outside its
 * allowlist, as GitLab's, which reads no token at all).
 */
export const RefusedCredentialsAreAnonymous = () => SetMetadata(REFUSED_CREDENTIALS_KEY, true);
