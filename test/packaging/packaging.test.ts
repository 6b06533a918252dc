import { execFile, execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'

// Installs the packages the way the docs tell a host app to: `scripts/pack.mjs` (`pnpm pack:all`)
// builds and packs them, and the `npm install` it prints installs the tarballs into a project
// outside the workspace; they are imported from ESM and CJS, with types resolving under node16 and
// bundler resolution and the strictest settings. The CLI's tarball installs the `kode` command.

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
let tarballs: string
/** The CLI installed from its tarball, as `npm install -g` would, into a private prefix. */
let cliPrefix: string
const REPOSITORY = 'https://git.example.test/kode/kode.git'
/** How often `dist/kode.js` was found missing while `scripts/pack.mjs` ran. */
let kodeMissing = 0

beforeAll(async () => {
  host = mkdtempSync(join(tmpdir(), 'kode-host-'))
  tarballs = join(host, 'tarballs')
  // The one script the docs give a user: builds and packs every package and the CLI. Other tests
  // run the CLI's `dist/kode.js` meanwhile: watch that it is there all along.
  const kode = join(repo, 'examples/cli/dist/kode.js')
  const watch = setInterval(() => {
    if (!existsSync(kode)) kodeMissing++
  }, 2)
  let printed: string
  try {
    printed = await run('node', ['scripts/pack.mjs', '--out', tarballs, '--repository', REPOSITORY], repo)
  } finally {
    clearInterval(watch)
  }
  const install = /npm install (\S+\.tgz(?: \S+\.tgz)*) @sinclair\/typebox/.exec(printed)
  if (!install) throw new Error(`scripts/pack.mjs printed no install command:\n${printed}`)
  writeFileSync(
    join(host, 'package.json'),
    // A Node host: Node's own types, no DOM lib, so nothing of ours may lean on browser globals.
    JSON.stringify(
      { name: 'kode-host', private: true, dependencies: { '@types/node': '^20.19.0' } },
      null,
      2,
    ),
  )
  // Exactly the install the script prints (no overrides): the tarballs must resolve each other.
  await run(
    'npm',
    [
      'install',
      // Registry metadata already in npm's cache is used as it is: the same install, without a
      // round trip to the registry per package.
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      ...install[1]!.split(' '),
      '@sinclair/typebox',
    ],
    host,
  )
  cliPrefix = join(host, 'global')
  const cli = readdirSync(tarballs).find((f) => f.startsWith('kode-cli-'))
  if (!cli) throw new Error('scripts/pack.mjs made no kode-cli tarball')
  await run(
    'npm',
    [
      'install',
      '-g',
      '--prefix',
      cliPrefix,
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      join(tarballs, cli),
    ],
    host,
  )
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
      // The strictest settings a host may use (@tsconfig/strictest's type checks), on our .d.ts too.
      '--exactOptionalPropertyTypes',
      '--noUncheckedIndexedAccess',
      '--noPropertyAccessFromIndexSignature',
      '--noImplicitReturns',
      '--noImplicitOverride',
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

describe('the tarballs', () => {
  const license = readFileSync(join(repo, 'LICENSE'), 'utf8')
  const entries = (file: string) => execFileSync('tar', ['-tzf', file], { encoding: 'utf8' }).split('\n')
  const manifestIn = (file: string) =>
    JSON.parse(execFileSync('tar', ['-xzOf', file, 'package/package.json'], { encoding: 'utf8' }))

  test('the repository has the Apache-2.0 LICENSE its packages declare, and each package a copy', () => {
    expect(license).toContain('Apache License\n                           Version 2.0, January 2004')
    expect(license).toContain('END OF TERMS AND CONDITIONS')
    for (const dir of [...packages.map((p) => p.dir), join(repo, 'examples/cli')])
      expect(readFileSync(join(dir, 'LICENSE'), 'utf8'), dir).toBe(license)
  })

  test.each([...packages.map((p) => [p.name, relative(repo, p.dir)]), ['kode-cli', 'examples/cli']])(
    '%s carries its README, the LICENSE, repository and homepage',
    (name, dir) => {
      const file = join(
        tarballs,
        readdirSync(tarballs).find((f) => f.startsWith(`${name.replace('@', '').replace('/', '-')}-`))!,
      )
      expect(entries(file)).toEqual(expect.arrayContaining(['package/README.md', 'package/LICENSE']))
      const manifest = manifestIn(file)
      expect(manifest).toMatchObject({
        name,
        license: 'Apache-2.0',
        repository: { type: 'git', url: `git+${REPOSITORY}`, directory: dir },
        homepage: 'https://git.example.test/kode/kode#readme',
      })
      // workspace: ranges are resolved, so npm can install the tarball.
      expect(JSON.stringify(manifest.dependencies ?? {})).not.toContain('workspace:')
    },
  )

  test("building for the tarballs never leaves the CLI's dist/kode.js missing (tests and shells run it meanwhile)", () => {
    expect(kodeMissing).toBe(0)
  })

  test('the working tree is left as it was: the fields exist only in the tarballs', () => {
    for (const p of packages)
      expect(JSON.parse(readFileSync(join(p.dir, 'package.json'), 'utf8')).repository).toBeUndefined()
  })
})

describe('the kode CLI installed from its tarball', () => {
  const kode = () => join(cliPrefix, 'bin', 'kode')

  test('kode -v prints the version of its package', async () => {
    const { version } = JSON.parse(readFileSync(join(repo, 'examples/cli/package.json'), 'utf8'))
    expect(await run(kode(), ['-v'], host)).toBe(`kode ${version}\n`)
  })

  test('kode exec --output stream-json prints NDJSON only', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: join(host, 'xdg') }
    for (const key of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'OPENROUTER_API_KEY'])
      delete env[key]
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        kode(),
        ['exec', '--output', 'stream-json', '--sessions-dir', join(host, 'sessions'), 'hello'],
        { cwd: host, env },
        (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out)),
      ),
    )
    const lines = stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string })
    expect(lines.at(-1)?.type).toBe('end')
  })
})

describe('one provider registry per process', () => {
  test('a provider registered through the CommonJS build is found by the ESM build, and back', async () => {
    writeFileSync(
      join(host, 'registry.mjs'),
      `import { createRequire } from 'node:module'
import * as esm from '@kode/providers'
const cjs = createRequire(import.meta.url)('@kode/providers')
if (cjs.createClient === esm.createClient) throw new Error('expected two builds')
const factory = () => ({ buildRequest: () => ({ path: '/', headers: {}, body: {} }), createEventMapper: () => () => {} })
cjs.registerProvider('from-cjs', factory)
esm.registerProvider('from-esm', factory)
console.log(JSON.stringify({
  esm: esm.availableApis().filter((a) => a.startsWith('from-')),
  cjs: cjs.availableApis().filter((a) => a.startsWith('from-')),
  client: esm.createClient({ api: 'from-cjs', model: 'm', baseUrl: 'http://127.0.0.1:9' }).api,
}))
`,
    )
    expect(JSON.parse(await run('node', ['registry.mjs'], host))).toEqual({
      esm: ['from-cjs', 'from-esm'],
      cjs: ['from-cjs', 'from-esm'],
      client: 'from-cjs',
    })
  })
})

describe('error classes across the ESM and CommonJS builds', () => {
  test("every public error class has its own `is`, which recognises the other build's instances and only its own class", async () => {
    writeFileSync(
      join(host, 'errors.mjs'),
      `import { createRequire } from 'node:module'
const require = createRequire(import.meta.url)
const specifiers = ${JSON.stringify(specifiers)}
const missing = []
for (const s of specifiers) {
  const esm = await import(s)
  for (const [name, value] of Object.entries(esm)) {
    if (typeof value !== 'function' || !(value.prototype instanceof Error)) continue
    if (!Object.hasOwn(value, 'is')) missing.push(s + ' ' + name)
  }
}
const esm = await import('@kode/session')
const cjs = require('@kode/session')
const pg = require('@kode/session-postgres')
const locked = new cjs.SessionLockedError('s', undefined, undefined, 'this-store')
const notFound = new cjs.SessionError('session_not_found', 'no session s')
console.log(JSON.stringify({
  missing,
  instanceofAcross: locked instanceof esm.SessionLockedError,
  lockedIsLocked: esm.SessionLockedError.is(locked),
  notFoundIsLocked: esm.SessionLockedError.is(notFound),
  notFoundIsCorrupt: esm.CorruptHistoryError.is(notFound),
  leasedIsLocked: esm.SessionLockedError.is(new pg.SessionLeasedError('s', undefined, 'unknown', undefined)),
}))
`,
    )
    expect(JSON.parse(await run('node', ['errors.mjs'], host))).toEqual({
      missing: [],
      // Two builds, two classes: instanceof fails across them, as docs/runtimes.md says; `is` works.
      instanceofAcross: false,
      lockedIsLocked: true,
      notFoundIsLocked: false,
      notFoundIsCorrupt: false,
      leasedIsLocked: true,
    })
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
