import { Injectable, NotFoundException, PipeTransform } from '@nestjs/common';
import { BadParameter } from '../errors';
import { MAX_INT } from './transforms';

/**
 * An id no record has: what a path id above PostgreSQL's `integer` range becomes, so that the
 * route's own lookup answers it as GitLab's `find` does (`404 User Not Found`) instead of the
 * query failing with `out of range for type integer`.
 */
export const NO_SUCH_ID = 0;

function pathId(value: string): number {
  const n = Number(value);
  return n > MAX_INT ? NO_SUCH_ID : n;
}

/**
 * A numeric path id where GitLab's route requires digits (`/users/:id`): anything else does not
 * match the route, which GitLab answers with 404.
 */
@Injectable()
export class RouteIntPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    if (!/^\d{1,15}$/.test(value)) throw new NotFoundException();
    return pathId(value);
  }
}

/** A numeric path id that Grape declares as `Integer` (`:key_id`, `:email_id`): 400 `<name> is invalid`. */
export const intParam = (name: string) =>
  new (class implements PipeTransform<string, number> {
    transform(value: string): number {
      if (!/^\d{1,15}$/.test(value)) throw new BadParameter(`${name} is invalid`);
      return pathId(value);
    }
  })();
