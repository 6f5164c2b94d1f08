#!/usr/bin/env node
// The swagger CLI plugin's metadata as a module (`<outDir>/metadata.ts`), for code that is not compiled
// by `nest build`: Jest runs the sources through @swc/jest, which runs no TypeScript plugin, so the
// OpenAPI test loads this file with SwaggerModule.loadPluginMetadata to describe the DTOs exactly as
// the plugin does in dist/. The plugin's options are read from nest-cli.json, so both agree.
//   node scripts/openapi-metadata.mjs [outDir]   (default dist/openapi-metadata)
import { PluginMetadataGenerator } from '@nestjs/cli/lib/compiler/plugins/plugin-metadata-generator.js';
import { ReadonlyVisitor } from '@nestjs/swagger/plugin';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = resolve(process.argv[2] ?? join(root, 'dist', 'openapi-metadata'));
const cli = JSON.parse(readFileSync(join(root, 'nest-cli.json'), 'utf8'));
const plugin = cli.projects.lode.compilerOptions.plugins.find((p) => (p.name ?? p) === '@nestjs/swagger');
process.chdir(root);
mkdirSync(outDir, { recursive: true });
new PluginMetadataGenerator().generate({
  visitors: [new ReadonlyVisitor({ ...(plugin.options ?? {}), pathToSource: outDir })],
  outputDir: outDir,
  filename: 'metadata.ts',
  tsconfigPath: 'tsconfig.build.json',
  printDiagnostics: false,
});
