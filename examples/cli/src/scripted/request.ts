/**
 * What the scripted model reads from an Anthropic Messages request body: who is asking (the tools
 * offered tell the main agent from the explore sub-agent), the latest user prompt, how many turns
 * the model has taken since, and the tool results it has been sent.
 */
export interface ScriptedRequest {
  tools: string[]
  system: string
  /** The text of the latest user message that is not just tool results. */
  prompt: string
  /** Assistant messages since that prompt: 0 for the task's first turn. */
  turn: number
  /** Tool results since the prompt, by the name of the tool that produced them, latest last. */
  results: Map<string, string[]>
  /** Characters of the whole request, for a plausible input token count. */
  size: number
}

interface Block {
  type?: string
  text?: string
  id?: string
  name?: string
  tool_use_id?: string
  content?: string | Block[]
}

interface Message {
  role?: string
  content?: string | Block[]
}

/** Reads a request body sent to the scripted server (anything unexpected reads as empty). */
export function readScriptedRequest(body: unknown, rawBody: string): ScriptedRequest {
  const request = (typeof body === 'object' && body !== null ? body : {}) as {
    tools?: { name?: string }[]
    system?: string | Block[]
    messages?: Message[]
  }
  const messages = Array.isArray(request.messages) ? request.messages : []
  let start = messages.length
  let prompt = ''
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!
    if (message.role !== 'user') continue
    const text = textOf(message.content)
    if (text !== '') {
      start = i
      prompt = text
      break
    }
  }
  const names = new Map<string, string>()
  const results = new Map<string, string[]>()
  let turn = 0
  for (const message of messages.slice(start + 1)) {
    if (message.role === 'assistant') turn++
    for (const block of blocksOf(message.content)) {
      if (block.type === 'tool_use' && block.id && block.name) names.set(block.id, block.name)
      if (block.type === 'tool_result' && block.tool_use_id) {
        const name = names.get(block.tool_use_id) ?? 'unknown'
        results.set(name, [...(results.get(name) ?? []), textOf(block.content)])
      }
    }
  }
  return {
    tools: (request.tools ?? []).flatMap((tool) => (typeof tool.name === 'string' ? [tool.name] : [])),
    system: textOf(request.system),
    prompt,
    turn,
    results,
    size: rawBody.length,
  }
}

function blocksOf(content: string | Block[] | undefined): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  return Array.isArray(content) ? content : []
}

function textOf(content: string | Block[] | undefined): string {
  return blocksOf(content)
    .flatMap((block) => (block.type === 'text' && typeof block.text === 'string' ? [block.text] : []))
    .join('\n')
}
