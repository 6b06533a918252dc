import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import * as main from '@kode/protocol'
import * as helpers from '@kode/protocol/helpers'
import { expect, test } from 'vitest'

const src = resolve(import.meta.dirname, '../src')

/** The specifiers a module imports or re-exports at run time (`import type` and `export type` excluded). */
function runtimeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const specifiers: string[] = []
  for (const match of text.matchAll(/^(?:import|export)\s+(type\s+)?[^;']*?from\s+'([^']+)'/gms)) {
    if (!match[1]) specifiers.push(match[2]!)
  }
  return specifiers
}

/** Every module `entry` loads at run time, following relative imports; bare specifiers as they are. */
function moduleGraph(entry: string): Set<string> {
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const specifier of runtimeImports(file)) {
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')))
      else seen.add(specifier)
    }
  }
  visit(entry)
  return seen
}

test('the helpers entry loads no TypeBox, so importing it stays cheap', () => {
  const graph = [...moduleGraph(resolve(src, 'helpers.ts'))]
  expect(graph.filter((m) => m.includes('typebox') || m.endsWith('usage.ts'))).toEqual([])
  // The scan itself works: the main entry does reach TypeBox.
  expect([...moduleGraph(resolve(src, 'index.ts'))]).toContain('@sinclair/typebox')
})

test('the helpers entry exports the same functions as the main entry', () => {
  const mainExports = new Map<string, unknown>(Object.entries(main))
  expect(Object.keys(helpers).length).toBeGreaterThan(0)
  for (const [name, fn] of Object.entries(helpers)) expect(mainExports.get(name)).toBe(fn)
})
