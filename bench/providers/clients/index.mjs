// The clients compared, in table order, and the libraries whose cold import is timed.

/** Each client: its table label and its module (exporting `prepare`). */
export const CLIENTS = {
  floor: { label: 'floor: fetch + eventsource-parser', load: () => import('./floor.mjs') },
  'floor-items': { label: 'floor + an item per delta (for await)', load: () => import('./floor-items.mjs') },
  kode: { label: '@kode/providers', load: () => import('./kode.mjs') },
  'kode-batches': { label: '@kode/providers, readBatches', load: () => import('./kode-batches.mjs') },
  'ai-sdk': { label: 'AI SDK streamText', load: () => import('./ai-sdk.mjs') },
  'pi-ai': { label: 'pi-ai stream', load: () => import('./pi-ai.mjs') },
}

/** Client names in table order. */
export const CLIENT_NAMES = Object.keys(CLIENTS)

/** Cold imports timed, each in a fresh process: a label, which client it belongs to, the specifiers. */
export const IMPORTS = [
  { label: 'eventsource-parser (floor)', client: 'floor', specifiers: ['eventsource-parser'] },
  { label: '@kode/providers', client: 'kode', specifiers: ['@kode/providers'] },
  { label: 'ai + @ai-sdk/openai', client: 'ai-sdk', specifiers: ['ai', '@ai-sdk/openai'] },
  {
    label: 'ai + @ai-sdk/openai, anthropic, google',
    client: 'ai-sdk',
    specifiers: ['ai', '@ai-sdk/openai', '@ai-sdk/anthropic', '@ai-sdk/google'],
  },
  { label: '@mariozechner/pi-ai', client: 'pi-ai', specifiers: ['@mariozechner/pi-ai'] },
  {
    label: '@mariozechner/pi-ai + openai-completions',
    client: 'pi-ai',
    specifiers: ['@mariozechner/pi-ai', '@mariozechner/pi-ai/openai-completions'],
  },
]

/**
 * The client named `name`: one of {@link CLIENTS}, or `kode@<file URL>`, the Kode client importing
 * the build at that URL instead of the workspace's (see ab.mjs).
 */
export function clientByName(name) {
  if (!name.startsWith('kode@')) return CLIENTS[name]
  const specifier = name.slice('kode@'.length)
  return {
    label: specifier,
    load: async () => {
      const { prepareKode } = await import('./kode.mjs')
      return { prepare: (setup) => prepareKode(setup, false, specifier) }
    },
  }
}
