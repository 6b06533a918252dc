// @kode/providers, imported by package name: the workspace link resolves it to the built dist
// of packages/providers (build it first; until it exists the cell reads "n/a").
import { TOOL } from '../scenarios.mjs'
import { apiRoot } from './api-root.mjs'
import { Unavailable } from './unavailable.mjs'

/** Prepares one @kode/providers request, read item by item: resolves to the function that runs it. */
export function prepare(setup) {
  return prepareKode(setup, false)
}

/**
 * Prepares one @kode/providers request: resolves to the function that runs it. With `batches`
 * the stream is read with `readBatches` (the same items, one async-iterator turn per batch of
 * items ready together), else with `for await` item by item. `specifier` names another build to
 * import (`bench/providers/ab.mjs` compares two).
 */
export async function prepareKode({ wire, origin, scenario }, batches, specifier = '@kode/providers') {
  let providers
  try {
    providers = await import(specifier)
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error
    throw new Unavailable('@kode/providers is not built (pnpm --filter @kode/providers... build)', {
      cause: error,
    })
  }
  const client = providers.createClient({
    api: wire,
    model: 'bench-model',
    apiKey: 'bench',
    baseUrl: apiRoot(origin, scenario, wire),
  })
  const request = {
    messages: [{ role: 'user', id: '1', createdAt: 0, parts: [{ type: 'text', text: 'hi' }] }],
    tools: [TOOL],
  }
  return async () => {
    let message
    if (batches) {
      for await (const batch of providers.readBatches(client.stream(request))) {
        for (const item of batch) if (item.type === 'done') message = item.message
      }
    } else {
      for await (const item of client.stream(request)) {
        if (item.type === 'done') message = item.message
      }
    }
    if (!message) throw new Error('the stream ended without a done item')
    if (message.stopReason === 'error') {
      throw new Error(`done with stopReason error: ${message.errorMessage ?? ''}`)
    }
    let text = ''
    const toolCalls = []
    for (const part of message.parts) {
      if (part.type === 'text') {
        text += part.text
      } else if (part.type === 'tool_call') {
        toolCalls.push({ name: part.name, args: JSON.parse(part.argumentsJson) })
      }
    }
    return { text, toolCalls }
  }
}
