import { createSseTestServer, type ScriptStep, scriptedResponse } from '@kode/providers/testing'

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
      const steps: ScriptStep[] =
        result === undefined
          ? [
              { text: "I'll check the clock." },
              { toolCall: { id: 'toolu_1', name: 'clock', arguments: { timeZone: 'Asia/Tokyo' } } },
            ]
          : [{ text: `In Tokyo it is ${result}.` }]
      return scriptedResponse('anthropic', {
        id: 'msg_offline',
        steps,
        usage: { inputTokens: 120, outputTokens: 20 },
      })
    },
  })
  return server
}

/** The text of the last tool result in an Anthropic request body, if there is one. */
function lastToolResult(body: unknown): string | undefined {
  const messages = (body as { messages?: { content?: unknown }[] } | undefined)?.messages ?? []
  const blocks = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []))
  const result = blocks.filter((b) => b?.type === 'tool_result').at(-1)
  if (!result) return undefined
  return typeof result.content === 'string' ? result.content : result.content?.[0]?.text
}
