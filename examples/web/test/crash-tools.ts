import { defineTool, type Tool } from '@kode/core'
import { Type } from '@sinclair/typebox'

/**
 * The tools of the crash scenario, on both hosts: `lookup` (settled with an error if interrupted),
 * `charge` (idempotent by its call id: `onResume: 'rerun'`) and `notify` (not idempotent: an error
 * result on resume). Each run is logged as `<tool> <toolCallId> resumed=<bool> <host>` first;
 * `hang` keeps a tool from ever finishing (on the host that is killed).
 */
export function crashTools(options: {
  host: string
  log: (line: string) => void
  started?: (toolCallId: string) => void
  hang?: (name: string) => boolean
}): Tool[] {
  const tool = (name: string, onResume: 'error' | 'rerun', result: string) =>
    defineTool({
      name,
      description: `The ${name} tool`,
      parameters: Type.Object({}),
      onResume,
      execute: async (_args, ctx) => {
        options.log(`${name} ${ctx.toolCallId} resumed=${ctx.resumed} ${options.host}`)
        options.started?.(ctx.toolCallId)
        if (options.hang?.(name)) await new Promise(() => {})
        return result
      },
    })
  return [
    tool('lookup', 'error', 'invoice 42: 500 cents'),
    tool('charge', 'rerun', 'charged 500 cents'),
    tool('notify', 'error', 'notified'),
  ]
}
