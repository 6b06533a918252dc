import { type Static, Type } from '@sinclair/typebox'
import { Usage } from './usage.js'

export const TodoStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('in_progress'),
  Type.Literal('completed'),
])
export type TodoStatus = Static<typeof TodoStatus>

/** One entry of the agent's todo list (the `todo_change` event and the `todo_list` UI extra). */
export const TodoItem = Type.Object(
  {
    content: Type.String(),
    status: TodoStatus,
    activeForm: Type.Optional(Type.String()),
  },
  { $id: 'TodoItem' },
)
export type TodoItem = Static<typeof TodoItem>

/** Extra, display-only data a tool attaches to its result. Never sent to the model. */
export const ToolResultUiExtra = Type.Union(
  [
    Type.Object({ type: Type.Literal('diff'), diff: Type.String(), path: Type.Optional(Type.String()) }),
    Type.Object({ type: Type.Literal('todo_list'), todos: Type.Array(TodoItem) }),
    Type.Object({ type: Type.Literal('markdown'), markdown: Type.String() }),
    /**
     * Links a sub-agent tool result to the child session it ran; `moreSessionIds`, to the other
     * sessions, in the order they started, when the call ran several (the engine links them all
     * when it answers an interrupted or timed-out call). Readers from before it link the first.
     */
    Type.Object({
      type: Type.Literal('session'),
      sessionId: Type.String(),
      moreSessionIds: Type.Optional(Type.Array(Type.String())),
    }),
    /** Anything else a host wants to show; kept as given. */
    Type.Object({ type: Type.Literal('json'), value: Type.Unknown() }),
  ],
  { $id: 'ToolResultUiExtra' },
)
export type ToolResultUiExtra = Static<typeof ToolResultUiExtra>

/**
 * What a tool result changed beyond its text, for the engine to act on. `todo_change` makes the
 * engine emit a `todo_change` event from the result's `todo_list` UI extra. Unknown values are kept.
 */
export const ToolSideEffect = Type.String({ $id: 'ToolSideEffect' })
export type ToolSideEffect = Static<typeof ToolSideEffect>

/** Accounting for one agent's task: the main agent's or a sub-agent's. */
export const TaskMetadata = Type.Object(
  {
    sessionId: Type.Optional(Type.String()),
    subAgentName: Type.Optional(Type.String()),
    model: Type.Optional(Type.String()),
    provider: Type.Optional(Type.String()),
    usage: Type.Optional(Usage),
    costUsd: Type.Optional(Type.Number({ minimum: 0 })),
    durationMs: Type.Optional(Type.Number({ minimum: 0 })),
    turnCount: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { $id: 'TaskMetadata' },
)
export type TaskMetadata = Static<typeof TaskMetadata>

/** A task's accounting with its sub-agents'. */
export const TaskMetadataSummary = Type.Object(
  {
    main: TaskMetadata,
    subAgents: Type.Array(TaskMetadata),
  },
  { $id: 'TaskMetadataSummary' },
)
export type TaskMetadataSummary = Static<typeof TaskMetadataSummary>

/** Set on `task_start` of a sub-agent session: who spawned it and for what. */
export const SubAgentState = Type.Object(
  {
    name: Type.String(),
    parentSessionId: Type.String(),
    parentToolCallId: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
  },
  { $id: 'SubAgentState' },
)
export type SubAgentState = Static<typeof SubAgentState>
