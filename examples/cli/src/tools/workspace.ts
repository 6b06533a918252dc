import { lstat, realpath } from 'node:fs/promises'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'

/** The directory the built-in tools may read; every path they take is resolved inside it. */
export interface Workspace {
  /** Absolute, symlinks resolved. */
  readonly root: string
  /**
   * Resolves `path` (relative to the root, or absolute) to an absolute path inside the root, with
   * symlinks followed. Throws a {@link WorkspaceError} for a path that escapes the root.
   */
  resolve(path: string): Promise<string>
  /**
   * Resolves `path` for writing: an existing file as {@link Workspace.resolve} does (a symlink is
   * followed only when it leads to a file inside the root); a new one below its nearest existing
   * directory, which must itself lie inside the root once its symlinks are followed. Throws a
   * {@link WorkspaceError} for a path that escapes, a directory, or a dangling symlink.
   */
  resolveWritable(path: string): Promise<string>
  /** `absolute` as the tools show it: relative to the root, `.` for the root itself. */
  display(absolute: string): string
}

const WORKSPACE_ERROR = Symbol.for('kode-cli.WorkspaceError')

/**
 * Why a path was refused: it leads out of the root (`outside`), names nothing (`not_found`), is a
 * symlink to nothing (`dangling_symlink`), is a directory where a file is wanted (`directory`) or
 * a file where a directory is (`not_directory`), is a file with other names that may lie outside
 * (`hard_linked`, refused for writing), or changed between its check and its use (`changed`: a
 * directory on it was moved or swapped for a symlink).
 */
export type WorkspaceErrorCode =
  | 'outside'
  | 'not_found'
  | 'dangling_symlink'
  | 'directory'
  | 'not_directory'
  | 'hard_linked'
  | 'changed'

/** A path a tool was given lies outside the workspace, cannot be resolved, or may not be used. */
export class WorkspaceError extends Error {
  readonly [WORKSPACE_ERROR] = true
  override readonly name = 'WorkspaceError'

  constructor(
    readonly code: WorkspaceErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options)
  }

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
  const lexicalOf = (path: string) => {
    const lexical = resolve(root, path)
    if (!inside(lexical))
      throw new WorkspaceError('outside', `${path} is outside the working directory ${root}`)
    return lexical
  }
  const resolveExisting = async (path: string) => {
    // A symlink inside the root may still point out of it: judge where it really leads.
    const real = await realpath(lexicalOf(path)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT')
        throw new WorkspaceError('not_found', `${path} does not exist`, { cause: error })
      throw error
    })
    if (!inside(real))
      throw new WorkspaceError('outside', `${path} leads outside the working directory ${root}`)
    return real
  }
  const display = (absolute: string) => relative(root, absolute).split(sep).join('/') || '.'
  return {
    root,
    resolve: resolveExisting,
    async resolveWritable(path) {
      const lexical = lexicalOf(path)
      const link = await lstat(lexical).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined
        throw error
      })
      if (link) {
        if (link.isSymbolicLink()) {
          // Writing through a dangling link would create its target, wherever that is.
          await realpath(lexical).catch((error: NodeJS.ErrnoException) => {
            if (error.code === 'ENOENT')
              throw new WorkspaceError(
                'dangling_symlink',
                `${path} is a symlink to a file that does not exist`,
                { cause: error },
              )
            throw error
          })
        }
        const real = await resolveExisting(path)
        if ((await lstat(real)).isDirectory()) throw new WorkspaceError('directory', `${path} is a directory`)
        return real
      }
      // A new file: its nearest existing ancestor (symlinks followed) decides where it lands.
      let existing = dirname(lexical)
      const rest = [relative(existing, lexical)]
      for (;;) {
        const found = await lstat(existing).then(
          () => true,
          (error: NodeJS.ErrnoException) => {
            if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return false
            throw error
          },
        )
        if (found) break
        rest.unshift(relative(dirname(existing), existing))
        existing = dirname(existing)
      }
      const realDir = await realpath(existing)
      if (!inside(realDir))
        throw new WorkspaceError('outside', `${path} leads outside the working directory ${root}`)
      if (!(await lstat(realDir)).isDirectory())
        throw new WorkspaceError('not_directory', `${display(existing)} is not a directory`)
      return join(realDir, ...rest)
    },
    display,
  }
}
