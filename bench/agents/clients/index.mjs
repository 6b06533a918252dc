// The agent loops compared, in table order.

/** Each client: its table label and its module (exporting `prepare`). */
export const CLIENTS = {
  floor: { label: 'floor: fetch loop, no library', load: () => import('./floor.mjs') },
  'floor-events': {
    label: 'floor + eventsource-parser, events, a JSON line per message',
    load: () => import('./floor-events.mjs'),
  },
  'kode-providers': {
    label: '@kode/providers in the floor loop (no engine)',
    load: () => import('./kode-providers.mjs'),
  },
  kode: { label: 'Kode createAgent', load: () => import('./kode.mjs') },
  'ai-sdk': { label: 'AI SDK streamText tool loop', load: () => import('./ai-sdk.mjs') },
  'openai-agents': { label: 'OpenAI Agents JS run', load: () => import('./openai-agents.mjs') },
  'pi-agent': { label: 'pi-agent-core Agent', load: () => import('./pi-agent.mjs') },
}

/** Client names in table order. */
export const CLIENT_NAMES = Object.keys(CLIENTS)
