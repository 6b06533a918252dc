#!/usr/bin/env node
// The `kode` command: runs the bundle that `pnpm --filter kode-cli build` (or `pnpm demo`) makes.
// A separate file so the workspace can link the command before the first build.
import { existsSync } from 'node:fs'

const bundle = new URL('../dist/kode.js', import.meta.url)
if (!existsSync(bundle)) {
  process.stderr.write('kode: the CLI is not built yet: run `pnpm --filter kode-cli build` first\n')
  process.exit(1)
}
await import(bundle.href)
