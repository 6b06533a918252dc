import type { StoreWarning } from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'

/** What one append to a session of the file store did. */
export interface FileStoreSummary {
  /** The session's records after the append, by id. */
  records: string[]
  warnings: StoreWarning['type'][]
  /** The append's error (`name: message`), when it failed. */
  error?: string
}

/**
 * Appends one record to session `s` of the file store in `dir` and reads it back: run under each
 * runtime against a session whose writer lock was left by a process that no longer runs.
 */
export async function runFileStoreTask(dir: string): Promise<FileStoreSummary> {
  const warnings: StoreWarning['type'][] = []
  const store = createFileSessionStore({ dir, onWarning: (warning) => warnings.push(warning.type) })
  try {
    const text = { type: 'text' as const, text: 'Grüße 😀' }
    await store.append('s', [{ role: 'user', id: 'appended', createdAt: 0, parts: [text] }])
    return { records: (await store.read('s')).map((record) => record.id), warnings }
  } catch (error) {
    const name = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
    return { records: [], warnings, error: name }
  } finally {
    await store.close()
  }
}

const host = globalThis as { Deno?: { args: string[] }; process?: { argv: string[] } }
const args = host.Deno ? host.Deno.args : (host.process?.argv.slice(2) ?? [])
console.log(JSON.stringify(await runFileStoreTask(args[0]!)))
