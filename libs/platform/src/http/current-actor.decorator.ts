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
