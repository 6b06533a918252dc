#!/usr/bin/env node
// Builds every package and the kode CLI and packs each into a tarball that npm installs, so a host
// app can use Kode before it is on a registry. Usage:
//
//   node scripts/pack.mjs [--out <dir>] [--repository <git url>]
//
// --out         where the tarballs go (default dist/packs); emptied first
// --repository  the repository the tarballs' package.json files point to (`repository`, with the
//               package's `directory`, and `homepage`); default: this clone's `origin` remote.
//               Without either, those fields are left out rather than guessed.
//
// Prints the `npm install` command that installs the tarballs.
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { parseArgs } from 'node:util'

const root = resolve(import.meta.dirname, '..')
const { values } = parseArgs({
  options: { out: { type: 'string' }, repository: { type: 'string' } },
})
const out = resolve(values.out ?? join(root, 'dist/packs'))
const repository = values.repository ?? originUrl()

/** The packed directories: every package, then the CLI. */
const dirs = [
  ...readdirSync(join(root, 'packages')).map((name) => `packages/${name}`),
  'examples/cli',
].filter((dir) => {
  try {
    readFileSync(join(root, dir, 'package.json'))
    return true
  } catch {
    return false
  }
})

const run = (cmd, args, cwd = root) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })

const packages = dirs.filter((dir) => dir !== 'examples/cli')
run('pnpm', [...packages.flatMap((dir) => ['--filter', `./${dir}`]), 'run', 'build'])
if (dirs.includes('examples/cli')) buildInPlace(join(root, 'examples/cli'))
rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })

const tarballs = []
for (const dir of dirs) {
  const file = join(root, dir, 'package.json')
  const original = readFileSync(file, 'utf8')
  const manifest = JSON.parse(original)
  // The CLI is private in the workspace (never published by accident), but packing it is the way
  // to install the `kode` command.
  if (repository) Object.assign(manifest, repositoryFields(repository, dir))
  try {
    writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`)
    const packed = run('pnpm', ['pack', '--pack-destination', out], join(root, dir)).trim().split('\n').at(-1)
    tarballs.push({ name: manifest.name, file: resolve(join(root, dir), packed) })
  } finally {
    writeFileSync(file, original)
  }
}

const libraries = tarballs.filter((t) => t.name.startsWith('@kode/'))
const cli = tarballs.find((t) => t.name === 'kode-cli')
console.log(`Packed ${tarballs.length} tarballs into ${relative(process.cwd(), out) || '.'}:`)
for (const t of tarballs) console.log(`  ${t.name}: ${t.file}`)
console.log('\nIn your app, install the packages (all of them: they depend on each other):')
console.log(`  npm install ${libraries.map((t) => t.file).join(' ')} @sinclair/typebox`)
if (cli) console.log(`\nThe kode command:\n  npm install -g ${cli.file}`)
if (!repository) console.log('\n(no `origin` remote: the tarballs carry no repository or homepage field)')

/** `repository` and `homepage` for a package in `dir` of the repository at `url`. */
function repositoryFields(url, dir) {
  const web = url
    .replace(/^git\+/, '')
    .replace(/^git@([^:]+):/, 'https://$1/')
    .replace(/\.git$/, '')
  return {
    repository: { type: 'git', url: `git+${web}.git`, directory: dir },
    homepage: /^https:\/\/(github\.com|gitlab\.com)\//.test(web)
      ? `${web}/tree/HEAD/${dir}#readme`
      : `${web}#readme`,
  }
}

/**
 * Builds the CLI into a directory of its own, then moves each file over its old copy in `dist`: a
 * rename replaces a file whole, so `kode` (a test running it, a shell using it) never finds
 * `dist/kode.js` missing or half written, as it would while tsup cleans and writes `dist` itself.
 */
function buildInPlace(dir) {
  const staging = join(dir, 'dist/.next')
  rmSync(staging, { recursive: true, force: true })
  run('pnpm', ['exec', 'tsup', '--out-dir', staging], dir)
  for (const name of readdirSync(staging)) renameSync(join(staging, name), join(dir, 'dist', name))
  rmSync(staging, { recursive: true, force: true })
}

function originUrl() {
  try {
    return execFileSync('git', ['remote', 'get-url', 'origin'], {
      cwd: root,
      encoding: 'utf8',
      stdio: 'pipe',
    }).trim()
  } catch {
    return undefined
  }
}
