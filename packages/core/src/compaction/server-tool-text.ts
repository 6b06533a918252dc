import type { ServerToolPart } from '@kode/protocol'

/**
 * A tool the provider ran (a `server_tool` part) as a transcript line: what it was asked and what
 * it found are part of the work a summary keeps. Fields named `encrypted_*` (the opaque page
 * content of Anthropic's web search) are left out: the summarising model cannot read them, and
 * they would crowd out what it can.
 */
export function serverToolText(part: ServerToolPart): string {
  const { type, ...block } = part.block as Record<string, unknown> & { type: string }
  if (typeof block.name === 'string')
    return `Ran ${block.name} (the provider's tool) ${json(block.input ?? {})}`
  const code = block.executableCode as { code?: unknown } | undefined
  if (type === 'executableCode' && typeof code?.code === 'string')
    return `Ran code (the provider's tool):\n${code.code}`
  const result = block.codeExecutionResult as { outcome?: unknown; output?: unknown } | undefined
  if (type === 'codeExecutionResult' && typeof result?.output === 'string')
    return `Code output (${String(result.outcome ?? 'unknown outcome')}):\n${result.output}`
  return `Provider tool result ${type}: ${json('content' in block ? block.content : block)}`
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value, (key, field) => (key.startsWith('encrypted_') ? undefined : field)) ?? ''
  } catch {
    return String(value)
  }
}
