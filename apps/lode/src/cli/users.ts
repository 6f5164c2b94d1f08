import type { EventMetadata } from '@app/platform';
import {
  ChangeUserBlock,
  CreateAccessToken,
  CreateUser,
  newUserProfile,
  ROOT_TOKEN_SCOPES,
  UserQueries,
} from '@app/users';
import type { INestApplicationContext } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { InvalidArgumentError, type Command } from 'commander';
import { CliFailure } from './exit-codes';
import type { LodeRun } from './lode-run';
import { print } from './output';

const CLI: EventMetadata = { origin: 'cli' };

/** `--scopes api,read_user`: known scopes only. */
function scopesArg(value: string): string[] {
  const scopes = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!scopes.length) throw new InvalidArgumentError('name at least one scope');
  const unknown = scopes.filter((s) => !ROOT_TOKEN_SCOPES.includes(s));
  if (unknown.length)
    throw new InvalidArgumentError(`unknown scope(s): ${unknown.join(', ')} (known: ${ROOT_TOKEN_SCOPES.join(', ')})`);
  return scopes;
}

/**
 * `--expires YYYY-MM-DD`: a real date after today (UTC). A token is valid until the day it expires
 * (`expires_at > today`), so a date of today or before would make a token dead on arrival.
 */
export function expiresArg(value: string, today = new Date().toISOString().slice(0, 10)): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const date = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined;
  if (!date || date.toISOString().slice(0, 10) !== value)
    throw new InvalidArgumentError(`${value} is not a date of the form YYYY-MM-DD`);
  if (value <= today) throw new InvalidArgumentError(`${value} is not in the future (today is ${today})`);
  return value;
}

async function userId(app: INestApplicationContext, username: string): Promise<number> {
  const user = await app.get(UserQueries).findByIdOrUsername(username);
  if (!user) throw new CliFailure(`no user ${username}`);
  return user.id;
}

/** create-token, create-user, directory-block, directory-unblock. */
export function registerUserCommands(program: Command, run: LodeRun): void {
  program
    .command('create-token')
    .description('create a personal access token and print it, once')
    .requiredOption('--user <username>', 'the user the token acts as (a username or an id)')
    .option('--scopes <list>', `comma-separated scopes: ${ROOT_TOKEN_SCOPES.join(', ')}`, scopesArg, ['api'])
    .option('--name <name>', "the token's name", 'created on the command line')
    .option('--expires <YYYY-MM-DD>', 'the day it stops working (after today); default: never', expiresArg)
    .action(
      run.withLode(async ({ app }, o: { user: string; scopes: string[]; name: string; expires?: string }) => {
        const { secret } = await app.get(CommandBus).execute(
          new CreateAccessToken(
            {
              userId: await userId(app, o.user),
              name: o.name,
              scopes: o.scopes,
              impersonation: false,
              expiresAt: o.expires ?? null,
            },
            CLI,
          ),
        );
        print(secret);
      }),
    );

  program
    .command('create-user')
    .description("create a user as POST /users does (GitLab's validation and errors); print its id and username")
    .requiredOption('--username <username>', 'the username (also the path of their namespace)')
    .requiredOption('--email <email>', 'the primary e-mail address')
    .requiredOption('--name <name>', 'the full name')
    .option(
      '--password <password>',
      'the password (8 to 128 characters; other local users may see the command line); default: none, tokens only',
    )
    .option('--admin', 'make the user an administrator')
    .action(
      run.withLode(
        async ({ app }, o: { username: string; email: string; name: string; password?: string; admin?: boolean }) => {
          const id = await app.get(CommandBus).execute(
            new CreateUser(
              newUserProfile({ name: o.name, username: o.username, email: o.email, isAdmin: o.admin }),
              // Nothing would mail a confirmation: the administrator vouches for the address.
              { password: o.password, skipConfirmation: true },
              CLI,
            ),
          );
          print(`${id} ${o.username}`);
        },
      ),
    );

  for (const action of ['block', 'unblock'] as const)
    program
      .command(`directory-${action}`)
      .description(
        action === 'block'
          ? 'block a user as a directory synchronisation would (the API cannot lift it)'
          : 'lift a block set by directory-block',
      )
      .requiredOption('--user <username>', 'the user (a username or an id)')
      .action(
        run.withLode(async ({ app }, o: { user: string }) => {
          const changed = await app
            .get(CommandBus)
            .execute(new ChangeUserBlock(await userId(app, o.user), action, true, CLI));
          print(changed ? `${action}ed ${o.user}` : `${o.user} unchanged`);
        }),
      );
}
