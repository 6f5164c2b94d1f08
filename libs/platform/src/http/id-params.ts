import { Injectable, NotFoundException, PipeTransform } from '@nestjs/common';
import { BadParameter } from '../errors';

/**
 * A numeric path id where GitLab's route requires digits (`/users/:id`): anything else does not
 * match the route, which GitLab answers with 404.
 */
@Injectable()
export class RouteIntPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    if (!/^\d{1,15}$/.test(value)) throw new NotFoundException();
    return Number(value);
  }
}

/** A numeric path id that Grape declares as `Integer` (`:key_id`, `:email_id`): 400 `<name> is invalid`. */
export const intParam = (name: string) =>
  new (class implements PipeTransform<string, number> {
    transform(value: string): number {
      if (!/^\d{1,15}$/.test(value)) throw new BadParameter(`${name} is invalid`);
      return Number(value);
    }
  })();
