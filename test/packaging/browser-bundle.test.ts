import { describe, expect, test } from 'vitest'
import { bundleForBrowser, NodeImportError } from './browser-bundle.js'

// What a web app's bundler does with Kode: every main entry of the four packages, bundled for the
// browser with their dependencies, must reach no Node built-in. The file store's entry is the
// control: it needs node:fs, and the check must say so.

const mainEntries = [
  '@kode/protocol',
  '@kode/protocol/helpers',
  '@kode/providers',
  '@kode/session',
  '@kode/core',
]

describe('a browser bundle', () => {
  test('of every main entry imports no Node built-in', async () => {
    const code = mainEntries.map((entry, i) => `export * as m${i} from '${entry}'`).join('\n')
    const bundle = await bundleForBrowser(code)
    // The bundle holds the packages' code, not an empty shell.
    for (const name of [
      'createAgent',
      'createClient',
      'createMemorySessionStore',
      'deriveReplayEvents',
      'exportHtml',
    ]) {
      expect(bundle).toContain(`function ${name}(`)
    }
  })

  test('of the file store entry fails, naming the Node built-ins and who imports them', async () => {
    const error = await bundleForBrowser(`export * from '@kode/session/file'`).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NodeImportError)
    const imports = (error as NodeImportError).imports
    expect(imports.map((i) => i.specifier)).toContain('node:fs/promises')
    expect(imports.every((i) => i.importer.includes('packages/session/src/store/file/'))).toBe(true)
  })
})
