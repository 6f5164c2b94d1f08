import { InvalidArgumentError } from 'commander';

/** A whole number from `min` to `max` (an id, a limit), or commander's usage error (exit 2). */
export function intArg(min: number, max = 2_147_483_647): (value: string) => number {
  return (value: string) => {
    const n = /^\d{1,10}$/.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`${value} is not a whole number from ${min} to ${max}`);
    return n;
  };
}
