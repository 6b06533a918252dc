import type { TaskFinishReason, TaskMetadataSummary, TodoItem, Usage } from '@kode/protocol'
import type { MarkdownLine } from './text-stream.js'

/**
 * What a {@link DisplayStateMachine} asks the renderer to show. Every command names the session it
 * belongs to, so the renderer can style sub-agent sessions apart. The state machine decides what
 * to show; the renderer only decides how.
 */
export type RenderCommand =
  /** The banner: where the agent works and which model it talks to. */
  | { type: 'welcome'; sessionId: string; workDir: string; model?: string; provider?: string }
  /** A user's input, shown when a session is replayed (live input is already on screen). */
  | { type: 'user_prompt'; sessionId: string; text: string }
  | { type: 'thinking_start'; sessionId: string }
  | { type: 'thinking_delta'; sessionId: string; text: string }
  /** Thinking ended: collapse it to `header` (the whole `text` for renderers that expand it). */
  | { type: 'thinking_end'; sessionId: string; header: string; text: string; durationMs?: number }
  /** A complete line of assistant markdown. */
  | { type: 'text_line'; sessionId: string; line: MarkdownLine }
  /** The assistant's open line so far (`''` when there is none). */
  | { type: 'text_partial'; sessionId: string; text: string }
  | { type: 'image'; sessionId: string; ref: string }
  /** The sources the model cited for a response: each a label (title or URL) and its URL. */
  | { type: 'sources'; sessionId: string; sources: { label: string; url?: string }[] }
  /** The model started a tool call (a hint: it is not running yet). */
  | { type: 'tool_pending'; sessionId: string; toolCallId: string; toolName: string }
  | { type: 'tool_start'; sessionId: string; toolCallId: string; toolName: string; summary: string }
  | { type: 'tool_progress'; sessionId: string; toolCallId: string; message: string }
  | {
      type: 'tool_done'
      sessionId: string
      toolCallId: string
      toolName: string
      summary: string
      status: 'success' | 'error'
      preview: string
      durationMs?: number
    }
  | { type: 'todo_list'; sessionId: string; todos: TodoItem[] }
  /** One response's usage, with how full the context window is when known. */
  | {
      type: 'usage'
      sessionId: string
      usage: Usage
      costUsd?: number
      context?: { percent: number; window?: number }
    }
  /** The main task ended (the renderer clears what is still live). */
  | { type: 'task_end'; sessionId: string; reason?: TaskFinishReason; metadata?: TaskMetadataSummary }
  /** A compact status line of a sub-agent session, in the sub-agent's colour. */
  | {
      type: 'sub_agent_status'
      sessionId: string
      name: string
      color: number
      tone: 'start' | 'ok' | 'error' | 'done'
      text: string
    }
  | { type: 'notice'; sessionId: string; text: string }
  | { type: 'error'; sessionId: string; message: string; canRetry: boolean }
  | { type: 'interrupt'; sessionId: string }
  /** The display shuts down (the global `end` event). */
  | { type: 'shutdown'; sessionId: string }
