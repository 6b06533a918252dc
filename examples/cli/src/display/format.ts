import type { Citation, TaskMetadata, TaskMetadataSummary, Usage } from '@kode/protocol'
import { cutText, distinctSources } from '@kode/protocol/helpers'

/** `1234` → `1.2k`, `1234567` → `1.2M`; small counts as they are. */
export function formatCount(n: number): string {
  if (n < 1000) return String(n)
  if (n < 1_000_000) return `${trim(n / 1000)}k`
  return `${trim(n / 1_000_000)}M`
}

function trim(value: number): string {
  return value >= 100 ? value.toFixed(0) : value.toFixed(1).replace(/\.0$/, '')
}

/** Milliseconds as `850ms`, `2.1s`, `3m 05s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`
  const minutes = Math.floor(ms / 60_000)
  const seconds = Math.round((ms % 60_000) / 1000)
  return `${minutes}m ${String(seconds).padStart(2, '0')}s`
}

/** US dollars with enough digits to see small costs: `$0.0042`, `$1.23`. */
export function formatCost(usd: number): string {
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`
}

/** One response's usage: `1.2k in (800 cached) · 340 out (120 reasoning) · $0.0041 · context 3% of 200k`. */
export function usageLine(
  usage: Usage,
  costUsd: number | undefined,
  context: { percent: number; window?: number } | undefined,
): string {
  const parts: string[] = []
  if (usage.inputTokens !== undefined) {
    const cached = usage.cacheReadTokens ? ` (${formatCount(usage.cacheReadTokens)} cached)` : ''
    parts.push(`${formatCount(usage.inputTokens)} in${cached}`)
  }
  if (usage.outputTokens !== undefined) {
    const reasoning = usage.reasoningTokens ? ` (${formatCount(usage.reasoningTokens)} reasoning)` : ''
    parts.push(`${formatCount(usage.outputTokens)} out${reasoning}`)
  }
  if (costUsd !== undefined) parts.push(formatCost(costUsd))
  if (context) {
    const of = context.window ? ` of ${formatCount(context.window)}` : ''
    parts.push(
      `context ${context.percent < 1 ? context.percent.toFixed(1) : Math.round(context.percent)}%${of}`,
    )
  }
  return parts.join(' · ')
}

/** A task's totals: `4 turns · 5.2k tokens · $0.0123 · 12.3s · 1 sub-agent`. */
export function taskSummaryLine(summary: TaskMetadataSummary): string {
  const { main, subAgents } = summary
  const all = [main, ...subAgents]
  const tokens = all.reduce((sum, m) => sum + (m.usage?.totalTokens ?? tokensOf(m)), 0)
  const costs = all.flatMap((m) => (m.costUsd !== undefined ? [m.costUsd] : []))
  const parts: string[] = []
  if (main.turnCount !== undefined) parts.push(plural(main.turnCount, 'turn'))
  if (tokens > 0) parts.push(`${formatCount(tokens)} tokens`)
  if (costs.length > 0) parts.push(formatCost(costs.reduce((a, b) => a + b, 0)))
  if (main.durationMs !== undefined) parts.push(formatDuration(main.durationMs))
  if (subAgents.length > 0) parts.push(plural(subAgents.length, 'sub-agent'))
  return parts.join(' · ')
}

/** A sub-agent's totals for its closing status line: `3 turns · 2.1k tokens`. */
export function subAgentTotals(metadata: TaskMetadata | undefined): string {
  if (!metadata) return ''
  const parts: string[] = []
  if (metadata.turnCount !== undefined) parts.push(plural(metadata.turnCount, 'turn'))
  const tokens = metadata.usage?.totalTokens ?? tokensOf(metadata)
  if (tokens > 0) parts.push(`${formatCount(tokens)} tokens`)
  if (metadata.durationMs !== undefined) parts.push(formatDuration(metadata.durationMs))
  return parts.join(' · ')
}

function tokensOf(metadata: TaskMetadata): number {
  return (metadata.usage?.inputTokens ?? 0) + (metadata.usage?.outputTokens ?? 0)
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}

/** The arguments a tool call line shows: its main argument, else compact JSON, cut to `max`. */
export function argumentSummary(argumentsJson: string, max = 60): string {
  let args: unknown
  try {
    args = JSON.parse(argumentsJson)
  } catch {
    return clip(argumentsJson, max)
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return clip(argumentsJson, max)
  const record = args as Record<string, unknown>
  for (const key of ['description', 'path', 'pattern', 'prompt', 'query', 'command', 'url']) {
    const value = record[key]
    if (typeof value !== 'string') continue
    const where = key === 'pattern' && typeof record.path === 'string' ? ` in ${record.path}` : ''
    return clip(key === 'pattern' ? `/${value}/${where}` : value, max)
  }
  if (Array.isArray(record.todos)) return plural(record.todos.length, 'item')
  return clip(JSON.stringify(args), max)
}

/** A tool result's preview: its first non-empty line, cut, and how many lines there were. */
export function resultPreview(result: string, max = 70): string {
  const lines = result.split('\n').filter((line) => line.trim() !== '')
  if (lines.length === 0) return '(no output)'
  const first = clip(lines[0]!.trim(), max)
  return lines.length > 1 ? `${first} (+${lines.length - 1} lines)` : first
}

/**
 * Collapses whitespace and cuts `text` to `max` characters with `…`. The cut never keeps half of a
 * surrogate pair (an emoji): alone, that half prints as U+FFFD.
 */
export function clip(text: string, max: number): string {
  return cutText(text.replace(/\s+/g, ' ').trim(), max)
}

/**
 * The sources a response cited, each once (see `distinctSources`): a label (the title, else the
 * URL, else "source") and the URL when there is one.
 */
export function sourcesOf(citations: readonly Citation[]): { label: string; url?: string }[] {
  return distinctSources(citations).map(({ title, url }) => {
    const label = clip(title ?? url ?? 'source', 80)
    return url === undefined ? { label } : { label, url }
  })
}

/** The line collapsed thinking shows: its first line (a title, often bold), cut. */
export function thinkingHeader(text: string): string {
  const first = text.split('\n').find((line) => line.trim() !== '') ?? ''
  return clip(first.replace(/^#+\s*/, '').replace(/\*\*/g, ''), 72)
}
