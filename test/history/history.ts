import type {
  AssistantMessage,
  AssistantPart,
  CompactionRecord,
  DeveloperMessage,
  ErrorRecord,
  HistoryEvent,
  InterruptRecord,
  SystemMessage,
  TaskMetadataRecord,
  ToolResultMessage,
  UserContentPart,
  UserMessage,
} from '@kode/protocol'

/**
 * Builds history records with readable, deterministic ids and timestamps: each builder call takes
 * the next id (`m1`, `m2`, ...) and the next millisecond, so expectations can name them.
 */
export class HistoryBuilder {
  private n = 0
  private t: number

  constructor(start = 1_700_000_000_000) {
    this.t = start
  }

  private base() {
    this.n++
    return { id: `m${this.n}`, createdAt: this.t++ }
  }

  system(text: string): SystemMessage {
    return { role: 'system', ...this.base(), parts: [{ type: 'text', text }] }
  }

  user(text: string, extra: UserContentPart[] = []): UserMessage {
    return { role: 'user', ...this.base(), parts: [{ type: 'text', text }, ...extra] }
  }

  developer(text: string): DeveloperMessage {
    return { role: 'developer', ...this.base(), parts: [{ type: 'text', text }] }
  }

  assistant(parts: AssistantPart[] | string, fields: Partial<AssistantMessage> = {}): AssistantMessage {
    const list: AssistantPart[] = typeof parts === 'string' ? [{ type: 'text', text: parts }] : parts
    return { role: 'assistant', ...this.base(), parts: list, ...fields }
  }

  /** An assistant message calling each named tool, with call ids `<messageId>-c<k>`. */
  calls(names: string[], fields: Partial<AssistantMessage> = {}): AssistantMessage {
    const message = this.assistant([], { stopReason: 'tool_use', ...fields })
    message.parts = names.map((name, k) => ({
      type: 'tool_call',
      id: `${message.id}-c${k}`,
      name,
      argumentsJson: JSON.stringify({ k }),
    }))
    return message
  }

  result(
    callId: string,
    toolName: string,
    outputText: string,
    fields: Partial<ToolResultMessage> = {},
  ): ToolResultMessage {
    return {
      role: 'tool',
      ...this.base(),
      toolCallId: callId,
      toolName,
      status: 'success',
      outputText,
      parts: [],
      ...fields,
    }
  }

  error(message: string, canRetry = false): ErrorRecord {
    return { type: 'error', ...this.base(), message, canRetry }
  }

  interrupt(): InterruptRecord {
    return { type: 'interrupt', ...this.base() }
  }

  /** A compaction record keeping the records from `firstKeptId` on. */
  compaction(summary: string, firstKeptId: string): CompactionRecord {
    return {
      type: 'compaction',
      ...this.base(),
      summary,
      firstKeptId,
      tokensBefore: 9_000,
      tokensAfter: 1_200,
      reason: 'threshold',
      usage: { inputTokens: 8_000, outputTokens: 400 },
      costUsd: 0.01,
    }
  }

  taskMetadata(turnCount: number): TaskMetadataRecord {
    return { type: 'task_metadata', ...this.base(), metadata: { main: { turnCount }, subAgents: [] } }
  }
}

/** The tool call ids of an assistant message, in order. */
export function callIds(message: AssistantMessage): string[] {
  return message.parts.flatMap((part) => (part.type === 'tool_call' ? [part.id] : []))
}

/** A short valid history: a user prompt, a tool round trip and a final answer. */
export function shortConversation(h = new HistoryBuilder()): HistoryEvent[] {
  const user = h.user('read the file')
  const ask = h.calls(['read_file'])
  return [
    user,
    ask,
    h.result(callIds(ask)[0]!, 'read_file', 'contents'),
    h.assistant('done', { stopReason: 'stop' }),
  ]
}
