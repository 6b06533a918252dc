import { readFileSync } from 'node:fs'
import { dirname, relative, resolve } from 'node:path'
import * as main from '@kode/providers'
import * as adapter from '@kode/providers/adapter'
import { expect, test } from 'vitest'

const src = resolve(import.meta.dirname, '../src')

/** Every source file `entry` reaches through relative imports, type-only ones included. */
function moduleGraph(entry: string): string[] {
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    const text = readFileSync(file, 'utf8')
    for (const match of text.matchAll(/^(?:import|export)\s[^;']*?from\s+'(\.[^']+)'/gms)) {
      visit(resolve(dirname(file), match[1]!.replace(/\.js$/, '.ts')))
    }
  }
  visit(entry)
  return [...seen].map((file) => relative(src, file)).sort()
}

test('the main entry is the client api: clients, the registry, the catalog, errors and retry policy', () => {
  expect(Object.keys(main).sort()).toEqual([
    'ProviderError',
    'anthropic',
    'availableApis',
    'catalogModels',
    'createClient',
    'google',
    'isContextOverflow',
    'lookupModel',
    'openaiChat',
    'openaiResponses',
    'openrouter',
    'readBatches',
    'readReadyItems',
    'registerProvider',
    'resolveRetryPolicy',
    'retryAllowed',
    'retryDelayMs',
  ])
})

test('the adapter entry states its spec version and shares the error class with the main entry', () => {
  expect(adapter.ADAPTER_SPEC_VERSION).toBe(1)
  expect(adapter.ProviderError).toBe(main.ProviderError)
})

test('the adapter entry imports nothing internal: no client, registry, transport loop or built-in adapter', () => {
  const graph = moduleGraph(resolve(src, 'adapter/index.ts'))
  const internal = graph.filter(
    (file) =>
      /^(client|registry|accumulate|index)\.ts$/.test(file) ||
      /^(catalog|testing)\//.test(file) ||
      /^transport\/(response-stream|idle-watchdog|headers)\.ts$/.test(file) ||
      /^apis\/(?!shared\/)/.test(file),
  )
  expect(internal).toEqual([])
  // The scan itself works: the main entry does reach the client.
  expect(moduleGraph(resolve(src, 'index.ts'))).toContain('client.ts')
})
