import { createSseTestServer, frameTyped } from '@kode/providers/testing'

/**
 * A stand-in for the Anthropic API when no key is set: the providers' local SSE test server,
 * answering like Claude would: first a call of the `clock` tool, then, once the tool result is in
 * the request, a sentence quoting it. Real HTTP, real wire format, no network.
 */
export async function startOfflineModel(): Promise<{ url: string; close(): Promise<void> }> {
  console.log('(offline: no ANTHROPIC_API_KEY, so a local scripted model answers)\n')
  const server = await createSseTestServer({
    handler: (request) => {
      const result = lastToolResult(request.body)
      const blocks =
        result === undefined
          ? [text("I'll check the clock."), toolUse('toolu_1', 'clock', { timeZone: 'Asia/Tokyo' })]
          : [text(`In Tokyo it is ${result}.`)]
      return { body: frameTyped(messageEvents(blocks).map((event) => JSON.stringify(event))) }
    },
  })
  return server
}

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown }

const text = (value: string): Block => ({ type: 'text', text: value })
const toolUse = (id: string, name: string, input: unknown): Block => ({ type: 'tool_use', id, name, input })

/** The events of one Anthropic Messages stream carrying `blocks`. */
function messageEvents(blocks: Block[]): unknown[] {
  const usage = { input_tokens: 120, output_tokens: 20 }
  const events: unknown[] = [
    { type: 'message_start', message: { id: 'msg_offline', role: 'assistant', usage } },
  ]
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } })
      events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } })
    } else {
      events.push({ type: 'content_block_start', index, content_block: { ...block, input: {} } })
      const partial_json = JSON.stringify(block.input)
      events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } })
    }
    events.push({ type: 'content_block_stop', index })
  })
  const stop_reason = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn'
  events.push({ type: 'message_delta', delta: { stop_reason }, usage: { output_tokens: 20 } })
  events.push({ type: 'message_stop' })
  return events
}

/** The text of the last tool result in an Anthropic request body, if there is one. */
function lastToolResult(body: unknown): string | undefined {
  const messages = (body as { messages?: { content?: unknown }[] } | undefined)?.messages ?? []
  const blocks = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []))
  const result = blocks.filter((b) => b?.type === 'tool_result').at(-1)
  if (!result) return undefined
  return typeof result.content === 'string' ? result.content : result.content?.[0]?.text
}
