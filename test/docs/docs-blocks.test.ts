import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { beforeAll, describe, expect, test } from 'vitest'
import { type Block, blocksOf, docFiles, repo } from './blocks.js'
import { fragmentCheck } from './fragments.js'

// The TypeScript in README.md and docs/*.md is type-checked here against the packages' sources,
// in one tsc run, so the docs cannot drift from the API:
// - ```ts: a complete module.
// - ```ts plugin-test: a provider plugin's test module, importing the plugin from
//   `../src/index.js`. That import is mapped to examples/custom-provider's factory (`cohere`),
//   so the module is checked against a real plugin.
// - ```ts fragment <package>: a signature listing, checked by fragmentCheck (names exported,
//   parameters, option fields, return types).
// Canaries (modules that must fail) show that the plugin mapping and the fragment checks bite.
//
// The blocks are checked under the strictest settings a host app may use (those of
// @tsconfig/strictest that concern types: exactOptionalPropertyTypes, no property access from an
// index signature, no implicit returns, no unreachable code...), so a snippet copied into such an
// app compiles as it is. The unused-name checks are left out: a snippet binds a value to show its
// type. The packages' own sources are type-checked by `pnpm typecheck` under the repository's
// settings; errors the strictest settings find in them here are not the docs' and are ignored.

const out = join(import.meta.dirname, 'test-output')
const customProvider = join(repo, 'examples/custom-provider/src/index.js')

/** A file handed to tsc, and the block (or canary) its errors belong to. */
interface Checked {
  where: string
  file: string
  code: string
  /** Other files the module needs (the mapped plugin). */
  extra?: { file: string; code: string }[]
}

const fileOf = (where: string) => join(out, where.replace(/[/.: ]/g, '_'))

/** The plugin-test module at `<dir>/test/block.ts`, its `../src/index.js` a re-export of `cohere`. */
function pluginTest(where: string, code: string): Checked {
  const dir = fileOf(where)
  const names = /import\s*\{([^}]*)\}\s*from\s*'\.\.\/src\/index\.js'/
    .exec(code)?.[1]
    ?.split(',')
    .map((name) => name.trim())
    .filter(Boolean)
  const target = relative(join(dir, 'src'), customProvider)
  const shim = (names ?? []).map((name) => `export { cohere as ${name} } from '${target}'\n`).join('')
  return {
    where,
    file: join(dir, 'test/block.ts'),
    code,
    extra: [{ file: join(dir, 'src/index.ts'), code: shim || 'export {}\n' }],
  }
}

function checkedOf(block: Block): Checked | undefined {
  if (block.lang !== 'ts') return undefined
  const [kind, pkg] = block.tags
  if (kind === undefined) return { where: block.where, file: `${fileOf(block.where)}.ts`, code: block.code }
  if (kind === 'plugin-test') return pluginTest(block.where, block.code)
  if (kind === 'fragment' && pkg !== undefined)
    return { where: block.where, file: `${fileOf(block.where)}.ts`, code: fragmentCheck(block.code, pkg) }
  // An unknown tag, or a fragment without its package: fail this block.
  return {
    where: block.where,
    file: `${fileOf(block.where)}.ts`,
    code: `const _: never = 'tag ${block.tags}'\n`,
  }
}

const blocks = docFiles.flatMap(blocksOf).filter((block) => block.lang === 'ts')
const checked = blocks.flatMap((block) => checkedOf(block) ?? [])

/**
 * Not a block, but the promise the blocks rely on: every optional field of the public option
 * types takes `undefined`, so `{ apiKey: process.env['KEY'] }` compiles with
 * exactOptionalPropertyTypes on.
 */
const OPTION_TYPES = {
  '@kode/core': [
    'AgentOptions',
    'RunOptions',
    'ContinueOptions',
    'RunInputOptions',
    'CompactOptions',
    'CompactionOptions',
    'ModelSettings',
    'SubAgentSpec',
    'ProviderViewOptions',
    'ReActFormatterOptions',
    'CodeActFormatterOptions',
  ],
  '@kode/providers': [
    'ClientConfig',
    'LLMRequest',
    'StreamOptions',
    'RetryOptions',
    'ApiOptionsMap',
    'ChatApiOptions',
    'AnthropicApiOptions',
    'ResponsesApiOptions',
  ],
  '@kode/session': [
    'MemorySessionStoreOptions',
    'ReadBatchesOptions',
    'FollowOptions',
    'ReplayOptions',
    'ReplaySessionOptions',
    'ExportHtmlOptions',
    'ExportSessionHtmlOptions',
    'ForkOptions',
    'CreateSessionInit',
    'SessionPatch',
  ],
  '@kode/session/file': ['FileSessionStoreOptions'],
  '@kode/durable-dbos': ['DurableAgentsOptions', 'StartOptions', 'DurableContinueOptions'],
}
const optionsWhere = 'public option types: every optional field accepts undefined'
checked.push({
  where: optionsWhere,
  file: `${fileOf(optionsWhere)}.ts`,
  code: `${Object.entries(OPTION_TYPES)
    .map(([pkg, names]) => `import type { ${names.join(', ')} } from '${pkg}'\n`)
    .join('')}
type OptionalKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? K : never }[keyof T]
/** \`true\` when an object giving \`undefined\` to every optional field of T is a T. */
type AcceptsUndefined<T> = { [K in OptionalKeys<T>]: undefined } extends Pick<T, OptionalKeys<T>> ? true : false
${Object.values(OPTION_TYPES)
  .flat()
  .map((name) => `export const ${name[0]!.toLowerCase()}${name.slice(1)}: AcceptsUndefined<${name}> = true\n`)
  .join('')}`,
})

/** @tsconfig/strictest's type checks, on top of the base config's `strict` and `noUncheckedIndexedAccess`. */
const STRICTEST = {
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noPropertyAccessFromIndexSignature: true,
  noImplicitReturns: true,
  noImplicitOverride: true,
  noFallthroughCasesInSwitch: true,
  allowUnreachableCode: false,
  allowUnusedLabels: false,
  useUnknownInCatchVariables: true,
  isolatedModules: true,
  checkJs: true,
}

/** A canary that must fail under the strictest settings only: an optional option set to a `T | undefined`. */
const strictCanary: Checked = {
  where: 'canary strictest: exactOptionalPropertyTypes is on',
  file: `${fileOf('canary strictest')}.ts`,
  code: 'interface Exact {\n  a?: string\n}\nconst maybe: string | undefined = undefined\nexport const exact: Exact = { a: maybe }\n',
}

/** Files of the packages and examples themselves (not the blocks): see the note at the top. */
const isSource = (line: string) =>
  /^(\.\.\/)*(packages|examples)\//.test(line) && !line.includes('test-output')

/** Modules that must not type-check, one per kind of mistake the checks are meant to catch. */
const canaries: Checked[] = [
  ['fragment: a name the package does not export', 'notExportedAnywhere(value)', '@kode/session'],
  [
    'fragment: an option field the function does not take',
    'createFileSessionStore({ dir, noSuchOption })',
    '@kode/session/file',
  ],
  [
    'fragment: more parameters than the function has',
    'deriveReplayEvents(history, extra, more)',
    '@kode/session',
  ],
  ['fragment: a wrong return type', 'exportHtml(history): SessionStore', '@kode/session'],
  ['fragment: a name on another entry', 'createFileSessionStore({ dir })', '@kode/session'],
].map(([where, code, pkg]) => ({
  where: `canary ${where}`,
  file: `${fileOf(`canary ${where}`)}.ts`,
  code: fragmentCheck(`${code}\n`, pkg!),
}))
canaries.push(
  strictCanary,
  pluginTest(
    'canary plugin-test: the mapped plugin is typed, not any',
    "import { acme } from '../src/index.js'\nconst wrong: number = acme\nexport { wrong }\n",
  ),
)

const errors = new Map<string, string[]>()

beforeAll(async () => {
  rmSync(out, { recursive: true, force: true })
  const all = [...checked, ...canaries]
  for (const item of all) {
    for (const { file, code } of [item, ...(item.extra ?? [])]) {
      mkdirSync(dirname(file), { recursive: true })
      writeFileSync(file, code)
    }
  }
  const base = JSON.parse(readFileSync(join(repo, 'tsconfig.base.json'), 'utf8'))
  // The blocks import TypeBox as a host app would; resolve it to the copy the packages use.
  const typebox = 'packages/protocol/node_modules/@sinclair/typebox'
  const paths = {
    ...base.compilerOptions.paths,
    '@sinclair/typebox': [typebox],
    '@sinclair/typebox/*': [`${typebox}/*`],
    // DBOS is the host's (a peer dependency): resolve it to the copy @kode/durable-dbos uses.
    '@dbos-inc/dbos-sdk': ['packages/durable-dbos/node_modules/@dbos-inc/dbos-sdk'],
  }
  const tsconfig = {
    extends: '../../../tsconfig.base.json',
    compilerOptions: { baseUrl: '../../..', paths, ...STRICTEST },
    files: all.map((item) => item.file),
  }
  writeFileSync(join(out, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2))
  const output = await new Promise<string>((done) => {
    execFile(
      join(repo, 'node_modules/.bin/tsc'),
      ['--noEmit', '--pretty', 'false', '-p', out],
      (_error, stdout) => done(stdout),
    )
  })
  let key = 'elsewhere'
  for (const line of output.split('\n')) {
    if (line.trim() === '') continue
    // An indented line continues the diagnostic before it.
    if (!/^\s/.test(line)) {
      const owner = all.find((item) =>
        [item.file, ...(item.extra ?? []).map((e) => e.file)].some(
          (file) => line.startsWith(relative(repo, file)) || line.startsWith(file),
        ),
      )
      key = owner?.where ?? (isSource(line) ? 'sources' : 'elsewhere')
    }
    errors.set(key, [...(errors.get(key) ?? []), line])
  }
}, 120_000)

describe('code blocks in the docs', () => {
  test('there are blocks to check, of every kind', () => {
    expect(blocks.length).toBeGreaterThan(10)
    expect(blocks.filter((b) => b.tags[0] === 'plugin-test').length).toBeGreaterThan(0)
    expect(blocks.filter((b) => b.tags[0] === 'fragment').length).toBeGreaterThan(0)
  })

  test('the check found no error outside the blocks', () => {
    expect(errors.get('elsewhere') ?? []).toEqual([])
  })

  test.each(checked.map((item) => [item.where, item] as const))('%s type-checks', (_where, item) => {
    expect(errors.get(item.where) ?? []).toEqual([])
  })

  test.each(canaries.map((item) => [item.where] as const))('%s is caught', (where) => {
    expect(errors.get(where) ?? []).not.toEqual([])
  })
})
