import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/**
 * The walls of the architecture (docs/architecture.md), checked on every run:
 * 1. layers: `platform` <- `git` <- `users` <- `groups` <- `projects` <- `hooks`, `repositories` <- `audit` <- `web` <- apps;
 *    a lib reaches another lib only as `@app/<lib>` (its index), never an app; no app imports another app.
 * 2. tables: a table named in SQL belongs to the context whose code names it; others ask the owner. An app
 *    owns no table: it names none in SQL and asks each context through its index.
 * 3. processes: only libs/git starts one (git, ssh-keygen, ...) or loads nodegit.
 * 4. no import cycles among one lib's files: each cycle prints as the files and lines that close it.
 * 5. no SQL in `commands/`: a command reads and writes through its context's queries/ or an owned store.
 * Each violation prints as `file:line ...` so a failure says what to fix.
 */

// Jest runs from the repository root (rootDir in jest.config.json).
const ROOT = process.cwd();
const LIBS = join(ROOT, 'libs');
const APPS = join(ROOT, 'apps');

/**
 * A lib may import only libs of a lower rank. `git` is on the floor with platform, whose configuration
 * it reads (the data directory), and below every context.
 */
const RANK: Record<string, number> = {
  platform: 0,
  git: 1,
  users: 2,
  groups: 3,
  projects: 4,
  hooks: 5,
  repositories: 5,
  // The audit log reads every context's events, and asks groups and projects who may read it.
  audit: 6,
  // The read-only web pages read every context through its index, as the API's controllers do.
  web: 7,
};

const isSpec = (file: string): boolean => /\.(spec|int-spec|e2e-spec)\.ts$/.test(file);
const rel = (file: string): string => relative(ROOT, file).split(sep).join('/');

function tsFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : tsFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const libs = readdirSync(LIBS).filter((name) => existsSync(join(LIBS, name, 'src')));
const apps = existsSync(APPS) ? readdirSync(APPS).filter((name) => existsSync(join(APPS, name, 'src'))) : [];
const parse = (file: string): ts.SourceFile =>
  ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
const lineOf = (source: ts.SourceFile, pos: number): number => source.getLineAndCharacterOfPosition(pos).line + 1;

/** Where `file` lives: `lib:<name>` or `app:<name>`. */
function home(file: string): string | undefined {
  const [top, name] = rel(file).split('/');
  if (top === 'libs') return `lib:${name}`;
  if (top === 'apps') return `app:${name}`;
  return undefined;
}

/** Every module specifier: `import ... from`, `export ... from` and `import('...')`. */
function importsOf(source: ts.SourceFile): { spec: string; line: number }[] {
  const found: { spec: string; line: number }[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier))
        found.push({ spec: node.moduleSpecifier.text, line: lineOf(source, node.getStart()) });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push({ spec: node.arguments[0].text, line: lineOf(source, node.getStart()) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function layerViolations(): string[] {
  const violations: string[] = [];
  const files = [...libs.map((lib) => join(LIBS, lib, 'src')), ...apps.map((app) => join(APPS, app, 'src'))].flatMap(
    tsFiles,
  );
  for (const file of files) {
    const from = home(file)!;
    const [kind, name] = from.split(':');
    const source = parse(file);
    for (const { spec, line } of importsOf(source)) {
      const where = `${rel(file)}:${line} ${name}`;
      const alias = /^@app\/([^/]+)(\/.*)?$/.exec(spec);
      if (alias) {
        const [, target, deep] = alias;
        if (deep) violations.push(`${where} -> ${spec} (import the lib's index: @app/${target})`);
        if (kind === 'lib' && target === name)
          violations.push(`${where} -> ${spec} (a lib imports its own index: use a relative path)`);
        else if (kind === 'lib' && !(target in RANK))
          violations.push(`${where} -> ${spec} (unknown lib: add it to RANK)`);
        else if (kind === 'lib' && RANK[target] >= RANK[name])
          violations.push(`${where} -> @app/${target} (layers: ${target} is not below ${name})`);
        continue;
      }
      if (!spec.startsWith('.')) continue;
      const target = resolve(dirname(file), spec);
      const targetHome = home(target);
      if (targetHome === from) continue;
      // A spec may use the test suite's own helpers (temporary repositories, a test app).
      if (isSpec(file) && rel(target).startsWith('test/support/')) continue;
      if (targetHome?.startsWith('app:'))
        violations.push(
          `${where} -> ${spec} (${kind === 'app' ? 'an app imports another app' : 'a lib imports an app'})`,
        );
      else violations.push(`${where} -> ${spec} (reach ${targetHome ?? 'outside'} through @app/<lib>, not a path)`);
    }
  }
  return violations;
}

/** What only libs/git may load: libgit2 and the means to start a process (git, or anything else). */
const GIT_ONLY = new Set(['nodegit', 'child_process', 'node:child_process']);

/** A third wall: git is reached through the GitRepositories port, so no other code starts a process. */
function processViolations(): string[] {
  const violations: string[] = [];
  const files = [
    ...libs.filter((lib) => lib !== 'git').map((lib) => join(LIBS, lib, 'src')),
    ...apps.map((app) => join(APPS, app, 'src')),
  ]
    .flatMap(tsFiles)
    .filter((file) => !isSpec(file));
  for (const file of files) {
    for (const { spec, line } of importsOf(parse(file)))
      if (GIT_ONLY.has(spec))
        violations.push(`${rel(file)}:${line} -> ${spec} (only libs/git starts processes or loads libgit2)`);
  }
  return violations;
}

/** The file a relative specifier names: `x.ts`, or `x/index.ts` for a folder. */
function resolveRelative(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  return [`${base}.ts`, join(base, 'index.ts'), base].find((f) => f.endsWith('.ts') && existsSync(f));
}

/**
 * Import cycles among one lib's files, type-only imports included (a cycle of types is still files
 * that cannot be read, or moved, one without the other). Tarjan's strongly connected components; for
 * each tangle, one cycle through it is printed as `file:line -> file:line -> ...`, back to the first.
 */
function cycleViolations(): string[] {
  const violations: string[] = [];
  for (const lib of libs) {
    const edges = new Map<string, { to: string; line: number }[]>();
    for (const file of tsFiles(join(LIBS, lib, 'src'))) {
      const out: { to: string; line: number }[] = [];
      for (const { spec, line } of importsOf(parse(file))) {
        if (!spec.startsWith('.')) continue;
        const to = resolveRelative(file, spec);
        if (to && home(to) === `lib:${lib}`) out.push({ to, line });
      }
      edges.set(file, out);
    }
    for (const tangle of tangles(edges)) {
      const path = cycleThrough(tangle, edges);
      const steps = path.map(({ file, line }) => `${rel(file)}:${line}`).join(' -> ');
      violations.push(
        `${lib}: import cycle among ${tangle.size} files: ${steps} -> ${rel(path[0].file)} ` +
          '(move what both sides need into a module that imports neither)',
      );
    }
  }
  return violations;
}

/** The strongly connected components with more than one file, or a file importing itself. */
function tangles(edges: Map<string, { to: string }[]>): Set<string>[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: Set<string>[] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const { to } of edges.get(v) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(v, Math.min(low.get(v)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(v, Math.min(low.get(v)!, index.get(to)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = new Set<string>();
    for (;;) {
      const w = stack.pop()!;
      onStack.delete(w);
      component.add(w);
      if (w === v) break;
    }
    if (component.size > 1 || (edges.get(v) ?? []).some(({ to }) => to === v)) found.push(component);
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** One shortest cycle inside a tangle, from its first file (by name) back to it: each step a file and the line of its import. */
function cycleThrough(
  tangle: Set<string>,
  edges: Map<string, { to: string; line: number }[]>,
): { file: string; line: number }[] {
  const start = [...tangle].sort()[0];
  const previous = new Map<string, { file: string; line: number }>();
  const queue = [start];
  while (queue.length && !previous.has(start)) {
    const file = queue.shift()!;
    for (const { to, line } of edges.get(file) ?? []) {
      if (!tangle.has(to) || previous.has(to)) continue;
      previous.set(to, { file, line });
      queue.push(to);
    }
  }
  const path: { file: string; line: number }[] = [];
  let at = previous.get(start)!;
  for (;;) {
    path.unshift(at);
    if (at.file === start) break;
    at = previous.get(at.file)!;
  }
  return path;
}

/** The SQL helpers of @app/platform: calling one runs SQL. */
const SQL_HELPERS = new Set(['rows', 'firstRow', 'oneRow', 'execute']);
/** TypeORM's ways into the tables besides `query`. */
const TABLE_ACCESS = new Set(['query', 'getRepository', 'createQueryBuilder']);

/**
 * A command decides; what it reads or writes in the tables sits in the context's queries/ (a query
 * method or function returning typed rows) or an owned store class, which the command may hand its
 * transaction (`uow.db`). So no command file (one under a `commands/` folder, or a capability's
 * `*.command.ts` / `*.commands.ts` in a context cut by capability) names `DataSource`, calls `.query(`,
 * `.getRepository(` or `.createQueryBuilder(`, or calls platform's SQL helpers.
 */
const isCommandFile = (file: string): boolean =>
  rel(file).split('/').includes('commands') || /\.commands?\.ts$/.test(file);

function commandFiles(): string[] {
  return libs.flatMap((lib) => tsFiles(join(LIBS, lib, 'src'))).filter((file) => !isSpec(file) && isCommandFile(file));
}

function commandSqlViolations(): string[] {
  const violations: string[] = [];
  for (const file of commandFiles()) {
    const source = parse(file);
    const helpers = new Set<string>();
    for (const statement of source.statements)
      if (
        ts.isImportDeclaration(statement) &&
        ts.isStringLiteral(statement.moduleSpecifier) &&
        statement.moduleSpecifier.text === '@app/platform' &&
        statement.importClause?.namedBindings &&
        ts.isNamedImports(statement.importClause.namedBindings)
      )
        for (const element of statement.importClause.namedBindings.elements)
          if (SQL_HELPERS.has((element.propertyName ?? element.name).text)) helpers.add(element.name.text);
    const visit = (node: ts.Node): void => {
      const where = `${rel(file)}:${lineOf(source, node.getStart(source))}`;
      if (ts.isIdentifier(node) && node.text === 'DataSource')
        violations.push(`${where} DataSource (a command asks its context's queries/ or an owned store)`);
      else if (ts.isCallExpression(node)) {
        const callee = node.expression;
        if (ts.isPropertyAccessExpression(callee) && TABLE_ACCESS.has(callee.name.text))
          violations.push(`${where} .${callee.name.text}() (move it to the context's queries/ or an owned store)`);
        else if (ts.isIdentifier(callee) && helpers.has(callee.text))
          violations.push(`${where} ${callee.text}() runs SQL (move it to the context's queries/ or an owned store)`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return violations;
}

/**
 * table -> owning context, from every `create [unlogged] table` in the migrations, so a new table is
 * covered at once.
 */
function tableOwners(): Map<string, string> {
  const owners = new Map<string, string>();
  for (const lib of libs) {
    for (const file of tsFiles(join(LIBS, lib, 'src')).filter(isMigration)) {
      for (const [, table] of readFileSync(file, 'utf8').matchAll(
        /create\s+(?:unlogged\s+)?table\s+(?:if\s+not\s+exists\s+)?"?(\w+)/gi,
      ))
        owners.set(table.toLowerCase(), lib);
    }
  }
  return owners;
}

const isMigration = (file: string): boolean => rel(file).split('/').includes('migrations');

/** The raw text of every string and template literal part, with where it starts. */
function literalsOf(source: ts.SourceFile): { text: string; pos: number }[] {
  const found: { text: string; pos: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      // Import specifiers are module paths, not SQL.
      if (!(ts.isStringLiteral(node) && (ts.isImportDeclaration(node.parent) || ts.isExportDeclaration(node.parent))))
        found.push({ text: node.getText(source), pos: node.getStart(source) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** A table named in SQL: after a keyword that takes one, or as the text `to_regclass` looks up. */
const SQL_TABLE =
  /\b(?:(?:from|join|into|update|table|references)\s+"?|to_regclass\(\s*'(?:public\.)?"?)([a-z_][a-z0-9_]*)/gi;

/**
 * Migrations are left out: they are where ownership is declared, and their foreign keys (`references
 * users (id) on delete cascade`) point down the layers by design, which `migrationViolations` checks.
 * Specs are checked like the code: a test of one context that writes another's table by hand bypasses
 * the owner just the same.
 */
function tableViolations(owners: Map<string, string>): string[] {
  const violations: string[] = [];
  const homes = [
    ...libs.map((lib) => ({ name: lib, dir: join(LIBS, lib, 'src'), isApp: false })),
    ...apps.map((app) => ({ name: app, dir: join(APPS, app, 'src'), isApp: true })),
  ];
  for (const { name, dir, isApp } of homes) {
    for (const file of tsFiles(dir).filter((f) => !isMigration(f))) {
      const source = parse(file);
      for (const { text, pos } of literalsOf(source)) {
        for (const match of text.matchAll(SQL_TABLE)) {
          const table = match[1].toLowerCase();
          const owner = owners.get(table);
          const where = `${rel(file)}:${lineOf(source, pos + match.index)} ${name} -> ${table}`;
          if (owner && isApp) violations.push(`${where} (owned by ${owner}: an app asks the owner through its index)`);
          else if (owner && owner !== name) violations.push(`${where} (owned by ${owner})`);
        }
      }
    }
  }
  return violations;
}

/** A foreign key may point at the context's own tables or a lower layer's, never up. */
function migrationViolations(owners: Map<string, string>): string[] {
  const violations: string[] = [];
  for (const lib of libs) {
    for (const file of tsFiles(join(LIBS, lib, 'src')).filter(isMigration)) {
      const source = parse(file);
      for (const { text, pos } of literalsOf(source)) {
        for (const match of text.matchAll(/\breferences\s+"?([a-z_][a-z0-9_]*)/gi)) {
          const table = match[1].toLowerCase();
          const owner = owners.get(table);
          if (owner && owner !== lib && !(RANK[owner] < RANK[lib]))
            violations.push(`${rel(file)}:${lineOf(source, pos + match.index)} ${lib} -> ${table} (owned by ${owner})`);
        }
      }
    }
  }
  return violations;
}

describe('architecture', () => {
  const owners = tableOwners();

  it('derives every table owner from the migrations', () => {
    for (const [table, owner] of [
      ['users', 'users'],
      ['members', 'groups'],
      ['projects', 'projects'],
      ['deploy_keys', 'projects'],
      ['deploy_keys_projects', 'projects'],
      ['protected_branches', 'projects'],
      ['releases', 'projects'],
      ['project_hooks', 'hooks'],
      ['audit_events', 'audit'],
      ['events', 'platform'],
      ['throttle_counters', 'platform'],
    ])
      expect(owners.get(table)).toBe(owner);
  });

  it('imports follow the layers: libs through @app/<lib> only, downward only; no app imports another', () => {
    expect(layerViolations()).toEqual([]);
  });

  it('starts processes and loads libgit2 only in libs/git', () => {
    expect(processViolations()).toEqual([]);
  });

  it("has no import cycle among one lib's files", () => {
    expect(cycleViolations()).toEqual([]);
  });

  it('runs no SQL in commands/: reads and writes go through queries/ or an owned store', () => {
    // The wall holds where the commands are: in folders by kind and in capabilities' folders alike.
    const found = commandFiles().map(rel);
    expect(found).toEqual(expect.arrayContaining(['libs/projects/src/members/add-project-member.command.ts']));
    expect(found.filter((f) => f.startsWith('libs/users/src/commands/')).length).toBeGreaterThan(0);
    expect(commandSqlViolations()).toEqual([]);
  });

  it('names a table in SQL only inside its owning context, never in an app', () => {
    expect(tableViolations(owners)).toEqual([]);
  });

  it('points foreign keys only at the own or a lower context', () => {
    expect(migrationViolations(owners)).toEqual([]);
  });
});
