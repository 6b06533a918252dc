import { defineTool, type Tool } from '@kode/core'
import { TodoItem } from '@kode/protocol'
import { Type } from '@sinclair/typebox'

const Parameters = Type.Object({
  todos: Type.Array(TodoItem, { description: 'The whole list, replacing the previous one' }),
})

const MARK = { pending: '[ ]', in_progress: '[~]', completed: '[x]' } as const

/**
 * `todo_write`: the agent's todo list. The result carries the list as a `todo_list` UI extra with
 * the `todo_change` side effect, so the engine emits a `todo_change` event the display shows.
 */
export function todoWriteTool(): Tool<typeof Parameters> {
  return defineTool({
    name: 'todo_write',
    description:
      'Writes your todo list for the current task (the whole list each time). Use it for work of ' +
      'three or more steps: mark one item in_progress while you work on it, completed when done.',
    parameters: Parameters,
    concurrent: false,
    execute({ todos }) {
      const done = todos.filter((t) => t.status === 'completed').length
      const lines = todos.map((t) => `${MARK[t.status]} ${t.content}`)
      return {
        outputText: `Todo list updated (${done}/${todos.length} done):\n${lines.join('\n')}`,
        uiExtra: { type: 'todo_list', todos },
        sideEffects: ['todo_change'],
      }
    },
  })
}
