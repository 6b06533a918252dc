import { execFile } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { beforeAll, describe, expect, test } from 'vitest'

// Every ```ts block in docs/*.md and README.md is a complete module, type-checked here against
// the packages' sources, so the docs cannot drift from the API. A block that is only a signature
// listing is marked ```ts fragment and skipped; keep those rare.

const repo = resolve(import.meta.dirname, '../..')
const out = join(import.meta.dirname, 'test-output')

interface Block {
  /** `docs/agents.md:10`: where the block's fence is. */
  where: string
  file: string
  code: string
}

function blocksOf(path: string): Block[] {
  const lines = readFileSync(path, 'utf8').split('\n')
  const blocks: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```ts') continue
    const start = i
    const body: string[] = []
    while (++i < lines.length && !lines[i]!.startsWith('```')) body.push(lines[i]!)
    const where = `${relative(repo, path)}:${start + 1}`
    const file = join(out, `${where.replace(/[/.:]/g, '_')}.ts`)
    blocks.push({ where, file, code: `${body.join('\n')}\n` })
  }
  return blocks
}

const sources = [
  join(repo, 'README.md'),
  ...readdirSync(join(repo, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(repo, 'docs', name)),
]
const blocks = sources.flatMap(blocksOf)
const errors = new Map<string, string[]>()

beforeAll(async () => {
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  for (const block of blocks) writeFileSync(block.file, block.code)
  const base = JSON.parse(readFileSync(join(repo, 'tsconfig.base.json'), 'utf8'))
  // The blocks import TypeBox as a host app would; resolve it to the copy the packages use.
  const typebox = 'packages/protocol/node_modules/@sinclair/typebox'
  const paths = {
    ...base.compilerOptions.paths,
    '@sinclair/typebox': [typebox],
    '@sinclair/typebox/*': [`${typebox}/*`],
  }
  const tsconfig = {
    extends: '../../../tsconfig.base.json',
    compilerOptions: { baseUrl: '../../..', paths },
    files: blocks.map((block) => block.file),
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
      const block = blocks.find((b) => line.startsWith(relative(repo, b.file)) || line.startsWith(b.file))
      key = block?.where ?? 'elsewhere'
    }
    errors.set(key, [...(errors.get(key) ?? []), line])
  }
}, 120_000)

describe('code blocks in the docs', () => {
  test('there are blocks to check', () => {
    expect(blocks.length).toBeGreaterThan(10)
  })

  test('the check found no error outside the blocks', () => {
    expect(errors.get('elsewhere') ?? []).toEqual([])
  })

  test.each(blocks.map((block) => [block.where, block] as const))('%s type-checks', (_where, block) => {
    expect(errors.get(block.where) ?? []).toEqual([])
  })
})
