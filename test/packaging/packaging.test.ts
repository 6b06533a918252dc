import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'

// Installs the packages the way a host app will: packed tarballs into a project outside the
// workspace, imported from ESM and CJS, with types resolving under node16 and bundler resolution.

const repo = resolve(import.meta.dirname, '../..')
const bin = (name: string) => join(repo, 'node_modules/.bin', name)
/**
 * Runs a command; on failure the error carries what it printed, so the test output shows why.
 * Asynchronous so the test worker keeps answering vitest while a long build or install runs.
 */
function run(cmd: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${cmd} ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`))
      else resolve(stdout)
    })
  })
}

interface Pkg {
  name: string
  dir: string
  exports: Record<string, unknown>
}
const packages: Pkg[] = readdirSync(join(repo, 'packages'))
  .filter((dir) => existsSync(join(repo, 'packages', dir, 'src/index.ts')))
  .map((dir) => {
    const manifest = JSON.parse(readFileSync(join(repo, 'packages', dir, 'package.json'), 'utf8'))
    return { name: manifest.name, dir: join(repo, 'packages', dir), exports: manifest.exports }
  })
/** Every import specifier a host can use: the package and its subpaths. */
const specifiers = packages.flatMap((p) =>
  Object.keys(p.exports)
    .filter((key) => key !== './package.json')
    .map((key) => (key === '.' ? p.name : `${p.name}/${key.slice(2)}`)),
)

let host: string

beforeAll(async () => {
  await run('pnpm', [...packages.flatMap((p) => ['--filter', p.name]), 'build'], repo)
  host = mkdtempSync(join(tmpdir(), 'kode-host-'))
  const tarballs = join(host, 'tarballs')
  mkdirSync(tarballs)
  for (const p of packages) await run('pnpm', ['pack', '--pack-destination', tarballs], p.dir)
  const files = readdirSync(tarballs)
  const fileOf = (name: string) => {
    const file = files.find((f) => f.startsWith(`${name.replace('@', '').replace('/', '-')}-`))
    if (!file) throw new Error(`no tarball for ${name}`)
    return `file:./tarballs/${file}`
  }
  const deps = Object.fromEntries(packages.map((p) => [p.name, fileOf(p.name)]))
  writeFileSync(
    join(host, 'package.json'),
    JSON.stringify(
      // A Node host: Node's own types, no DOM lib, so nothing of ours may lean on browser globals.
      {
        name: 'kode-host',
        private: true,
        dependencies: { ...deps, '@types/node': '^20.19.0' },
        overrides: deps,
      },
      null,
      2,
    ),
  )
  await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], host)
}, 600_000)

afterAll(() => {
  if (host) rmSync(host, { recursive: true, force: true })
})

describe('installed from tarballs into a host project', () => {
  test('every entry point imports from ESM', async () => {
    const script = specifiers
      .map(
        (s, i) =>
          `import * as m${i} from '${s}'; if (Object.keys(m${i}).length === 0) throw new Error('${s} is empty')`,
      )
      .join('\n')
    writeFileSync(join(host, 'esm.mjs'), `${script}\nconsole.log('esm ok')\n`)
    expect((await run('node', ['esm.mjs'], host)).trim()).toBe('esm ok')
  })

  test('every entry point requires from CJS', async () => {
    const script = specifiers
      .map((s) => `if (Object.keys(require('${s}')).length === 0) throw new Error('${s} is empty')`)
      .join('\n')
    writeFileSync(join(host, 'cjs.cjs'), `${script}\nconsole.log('cjs ok')\n`)
    expect((await run('node', ['cjs.cjs'], host)).trim()).toBe('cjs ok')
  })

  test('types resolve under node16 (ESM and CJS) and bundler resolution', async () => {
    const body = specifiers
      .map((s, i) => `import * as m${i} from '${s}'\nexport const k${i} = Object.keys(m${i})`)
      .join('\n')
    const typed = `import { decodeHistoryEvent, type HistoryEvent } from '@kode/protocol'\nexport const h: HistoryEvent = decodeHistoryEvent('')\n`
    writeFileSync(join(host, 'check.mts'), `${body}\n${typed}`)
    writeFileSync(join(host, 'check.cts'), `${body}\n${typed}`)
    const options = [
      '--noEmit',
      '--strict',
      '--skipLibCheck',
      'false',
      '--types',
      'node',
      '--target',
      'es2022',
    ]
    for (const [module, resolution] of [
      ['node16', 'node16'],
      ['esnext', 'bundler'],
    ] as const) {
      const files = module === 'node16' ? ['check.mts', 'check.cts'] : ['check.mts']
      await expect(
        run(bin('tsc'), [...options, '--module', module, '--moduleResolution', resolution, ...files], host),
      ).resolves.toBeTypeOf('string')
    }
    // Three full type checks of every package with skipLibCheck off: minutes on a loaded machine.
  }, 300_000)

  test('library code reads no process.env and registers nothing on import', () => {
    for (const p of packages) {
      for (const file of readdirSync(join(p.dir, 'dist')).filter((f) => /\.(c?js)$/.test(f))) {
        expect(readFileSync(join(p.dir, 'dist', file), 'utf8'), `${p.name}/${file}`).not.toMatch(
          /process\.env/,
        )
      }
      const manifest = JSON.parse(readFileSync(join(p.dir, 'package.json'), 'utf8'))
      expect(manifest.sideEffects, p.name).toBe(false)
      expect(manifest.engines.node, p.name).toBe('>=20.18.1')
    }
  })
})

describe.each(packages.map((p) => [p.name, p.dir]))('%s lints clean', (_name, dir) => {
  test('publint', async () => {
    expect(await run(bin('publint'), ['--strict'], dir)).toContain('All good')
  }, 60_000)

  test('are the types wrong', async () => {
    // attw exits non-zero on any problem; its table is the failure message.
    await expect(run(bin('attw'), ['--pack', '.', '--format', 'ascii'], dir)).resolves.toBeTypeOf('string')
  }, 120_000)
})
