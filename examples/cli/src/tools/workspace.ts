import { realpath } from 'node:fs/promises'
import { isAbsolute, relative, resolve, sep } from 'node:path'

/** The directory the built-in tools may read; every path they take is resolved inside it. */
export interface Workspace {
  /** Absolute, symlinks resolved. */
  readonly root: string
  /**
   * Resolves `path` (relative to the root, or absolute) to an absolute path inside the root, with
   * symlinks followed. Throws a {@link WorkspaceError} for a path that escapes the root.
   */
  resolve(path: string): Promise<string>
  /** `absolute` as the tools show it: relative to the root, `.` for the root itself. */
  display(absolute: string): string
}

const WORKSPACE_ERROR = Symbol.for('kode-cli.WorkspaceError')

/** A path a tool was given lies outside the workspace (or cannot be resolved). */
export class WorkspaceError extends Error {
  readonly [WORKSPACE_ERROR] = true
  override readonly name = 'WorkspaceError'

  /** True for a `WorkspaceError` from any copy of this module. */
  static is(error: unknown): error is WorkspaceError {
    return typeof error === 'object' && error !== null && WORKSPACE_ERROR in error
  }
}

/** Opens a workspace rooted at `dir` (resolved, symlinks followed). */
export async function openWorkspace(dir: string): Promise<Workspace> {
  const root = await realpath(resolve(dir))
  const inside = (path: string) => {
    const rel = relative(root, path)
    return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`))
  }
  return {
    root,
    async resolve(path) {
      const lexical = resolve(root, path)
      if (!inside(lexical)) throw new WorkspaceError(`${path} is outside the working directory ${root}`)
      // A symlink inside the root may still point out of it: judge where it really leads.
      const real = await realpath(lexical).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') throw new WorkspaceError(`${path} does not exist`, { cause: error })
        throw error
      })
      if (!inside(real)) throw new WorkspaceError(`${path} leads outside the working directory ${root}`)
      return real
    },
    display(absolute) {
      return relative(root, absolute).split(sep).join('/') || '.'
    },
  }
}
