import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, test } from 'vitest'
import { repo } from './blocks.js'
import { entries, type Surface, surfaces } from './surface.js'

// The docs explain every public name: each export of a published entry point (its runtime values,
// as importing the module lists them, and its types, as the compiler reads them) is named as code
// (in backticks, inline or in a fenced block) in docs/*.md or the package's README. Each field of
// an exported options type (`AgentOptions`, `ClientConfig`, ...) is named as code on a page that
// names the type itself, so the page that introduces the type explains its fields.

/**
 * Exported on purpose but not for users to call: each entry says why. Keep it short; a name a
 * user may meet belongs in the docs instead.
 */
const INTERNAL: Record<string, string> = {
  // The schema builder the event modules declare response-scoped events with; it leaks out through
  // the events folder's `export *`, and a host has no event of its own to declare.
  responseEvent: 'internal schema builder of @kode/protocol',
  // The `{ mode, modeContext }` pair the engine passes from `run` to the task; no public signature
  // takes or returns it (hosts pass `mode` and `modeContext` as `RunInputOptions` fields).
  UserMode: 'internal carrier of the run options mode and modeContext',
}

/**
 * Public names the docs do not explain yet: a backlog, to shrink, not to grow. A name leaves it
 * when a page documents it (the test fails while a listed name is already documented).
 */
const UNDOCUMENTED: Record<string, string[]> = {}

/** The pages of an entry point: docs/*.md, and the README of the package it belongs to. */
function pagesOf(entry: string): string[] {
  const pkg = entry.replace(/^@kode\//, '').split('/')[0]!
  return [
    ...readdirSync(join(repo, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
    `packages/${pkg}/README.md`,
  ]
}

/** The code of a markdown page: its fenced blocks and its inline code spans, joined. */
function codeOf(markdown: string): string {
  const code: string[] = []
  const prose: string[] = []
  let fenced = false
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced
    else (fenced ? code : prose).push(line)
  }
  for (const span of prose.join('\n').matchAll(/(`+)([^`]+?)\1/g)) code.push(span[2]!)
  return code.join('\n')
}

/** Whether `code` names `name` as a whole word (`openai-chat` too, as a key is written). */
function names(code: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`(?<![\\w$])${escaped}(?![\\w$])`).test(code)
}

let all: Record<string, Surface>
const code = new Map<string, string>()
const codeOfPage = (page: string) => {
  if (!code.has(page)) code.set(page, codeOf(readFileSync(join(repo, page), 'utf8')))
  return code.get(page)!
}

/** What an entry exports that its pages do not name, as `Name` and `OptionsType.field`. */
function undocumented(entry: string): string[] {
  const surface = all[entry]!
  const pages = pagesOf(entry).map(codeOfPage)
  const missing = [...new Set([...surface.values, ...surface.types])].filter(
    (name) => !pages.some((page) => names(page, name)),
  )
  for (const [type, fields] of Object.entries(surface.fields)) {
    const introducing = pages.filter((page) => names(page, type))
    if (introducing.length === 0) continue // the type itself is reported above
    for (const field of fields)
      if (!introducing.some((page) => names(page, field))) missing.push(`${type}.${field}`)
  }
  return missing
}

beforeAll(() => {
  all = surfaces()
}, 60_000)

describe('the public surface is documented', () => {
  test('every published entry point is enumerated', () => {
    expect(Object.keys(entries).sort()).toEqual(
      [
        '@kode/core',
        '@kode/durable-dbos',
        '@kode/mcp',
        '@kode/protocol',
        '@kode/protocol/helpers',
        '@kode/providers',
        '@kode/providers/adapter',
        '@kode/providers/testing',
        '@kode/session',
        '@kode/session-postgres',
        '@kode/session/file',
      ].sort(),
    )
  })

  test.each(Object.keys(entries))('the compiler lists every runtime export of %s', async (entry) => {
    const module: Record<string, unknown> = await import(/* @vite-ignore */ entry)
    const values = all[entry]!.values
    expect(values.length).toBeGreaterThan(0)
    expect(Object.keys(module).filter((name) => !values.includes(name))).toEqual([])
  })

  test.each(Object.keys(entries))('%s: every export and option field is named in the docs', (entry) => {
    const allowed = new Set([...Object.keys(INTERNAL), ...(UNDOCUMENTED[entry] ?? [])])
    expect(undocumented(entry).filter((name) => !allowed.has(name))).toEqual([])
  })

  test('the allowlists hold only exported names the docs do not name', () => {
    const exported = new Set(
      Object.values(all).flatMap((surface) => [
        ...surface.values,
        ...surface.types,
        ...Object.entries(surface.fields).flatMap(([type, fields]) => fields.map((f) => `${type}.${f}`)),
      ]),
    )
    const stale = Object.keys(INTERNAL).filter((name) => !exported.has(name))
    for (const [entry, listed] of Object.entries(UNDOCUMENTED)) {
      const missing = new Set(undocumented(entry))
      stale.push(...listed.filter((name) => !missing.has(name)).map((name) => `${entry}: ${name}`))
    }
    expect(stale).toEqual([])
  })

  test('a name counts only as code: in backticks or in a fenced block', () => {
    const page = codeOf('Call createAgent with `store` set.\n\n```ts\nconst x = createClient()\n```\n')
    expect(names(page, 'store')).toBe(true)
    expect(names(page, 'createClient')).toBe(true)
    expect(names(page, 'createAgent')).toBe(false)
    expect(names('`storeOptions`', 'store')).toBe(false)
    expect(names("{ 'openai-chat': {} }", 'openai-chat')).toBe(true)
  })
})
