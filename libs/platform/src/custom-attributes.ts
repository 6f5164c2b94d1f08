import { FieldErrors } from './errors';

/**
 * GitLab's CustomAttribute model, shared by users, groups and projects: a key and a value, each
 * present and at most 255 characters. Throws `Invalid` with GitLab's field messages.
 */
export function checkCustomAttribute(key: string, value: string): void {
  const errors = new FieldErrors();
  const tooLong = 'is too long (maximum is 255 characters)';
  if (!key) errors.add('key', "can't be blank");
  else if (key.length > 255) errors.add('key', tooLong);
  if (!value) errors.add('value', "can't be blank");
  else if (value.length > 255) errors.add('value', tooLong);
  errors.throwIfAny();
}

/** Whether the attribute already holds this value (own keys only: `constructor` is no attribute). */
export const holdsCustomAttribute = (attributes: Record<string, string>, key: string, value: string): boolean =>
  Object.hasOwn(attributes, key) && attributes[key] === value;
