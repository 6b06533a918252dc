import { type ServerToolPart, serverToolView } from '@kode/protocol'

/**
 * A tool the provider ran (a `server_tool` part) as a transcript line: what it was asked and what
 * it found are part of the work a summary keeps. Fields named `encrypted_*` (the opaque page
 * content of Anthropic's web search) are left out: the summarising model cannot read them, and
 * they would crowd out what it can.
 */
export function serverToolText(part: ServerToolPart): string {
  const view = serverToolView(part)
  switch (view.kind) {
    case 'call':
      return `Ran ${view.name} (the provider's tool) ${json(view.input)}`
    case 'code':
      return `Ran code (the provider's tool):\n${view.code}`
    case 'code_output':
      return `Code output (${view.outcome ?? 'unknown outcome'}):\n${view.output}`
    case 'result':
      return `Provider tool result ${view.type}: ${json(view.content === part.block ? withoutType(view.content) : view.content)}`
    default: {
      const unknown: never = view
      return unknown
    }
  }
}

/** A whole block shown as the result: its type is named already. */
function withoutType(content: unknown): unknown {
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return content
  const { type, ...rest } = content as Record<string, unknown>
  return rest
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value, (key, field) => (key.startsWith('encrypted_') ? undefined : field)) ?? ''
  } catch {
    return String(value)
  }
}
