import { registerDecorator, ValidationArguments } from 'class-validator';

/** Marks a message that `GitlabValidationPipe` must report as it stands. */
export const VERBATIM = 'gitlabVerbatim';

/**
 * Grape's `at_least_one_of`: put on a property that is never sent (it only carries the rule), e.g.
 * `@AtLeastOneOf(['password', 'reset_password']) readonly _password?: never;`.
 */
export function AtLeastOneOf(names: string[]) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: VERBATIM,
      target: target.constructor,
      propertyName,
      constraints: names,
      options: {
        message: `${names.join(', ')} ${names.length > 1 ? 'are' : 'is'} missing, at least one parameter must be provided`,
      },
      validator: {
        validate: (_: unknown, args: ValidationArguments) =>
          names.some(
            (n) =>
              (args.object as Record<string, unknown>)[n] !== undefined &&
              (args.object as Record<string, unknown>)[n] !== null,
          ),
      },
    });
}

/** Grape's `all_or_none_of`. */
export function AllOrNoneOf(names: string[]) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: VERBATIM,
      target: target.constructor,
      propertyName,
      constraints: names,
      options: { message: `${names.join(', ')} provide all or none of parameters` },
      validator: {
        validate: (_: unknown, args: ValidationArguments) => {
          const given = names.filter((n) => (args.object as Record<string, unknown>)[n] !== undefined);
          return given.length === 0 || given.length === names.length;
        },
      },
    });
}
