import { AgentError } from '../errors.js'
import type { AgentOptions } from './options.js'

/**
 * Refuses options without a usable client or store, which TypeScript catches but plain
 * JavaScript (or an `any`) lets through, to fail at the first run as a TypeError from inside the
 * engine. The message says where each comes from.
 */
export function checkRequiredOptions(options: AgentOptions): void {
  if (typeof (options.client as Partial<AgentOptions['client']> | undefined)?.stream !== 'function') {
    throw new AgentError(
      'invalid_options',
      'createAgent needs a client: one from createClient of @kode/providers',
    )
  }
  if (typeof options.store !== 'object' || options.store === null) {
    throw new AgentError(
      'invalid_options',
      'createAgent needs a store: createMemorySessionStore() or createFileSessionStore({ dir }) of @kode/session',
    )
  }
}
