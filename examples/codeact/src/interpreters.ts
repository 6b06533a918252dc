/** How one language's programs are run: the file the code is written to and the command line. */
export interface Interpreter {
  /** The file name the code is saved under, in the program's directory (`main.mjs`, `main.py`). */
  file: string
  /** The command and its arguments that run `file`, given the program's directory. */
  command(dir: string): { command: string; args: string[] }
}

/**
 * Node.js, as an ES module, under Node's permission model where the running Node has it: the
 * program may read and write only its own directory, and may not start processes or workers.
 */
export const nodeInterpreter: Interpreter = {
  file: 'main.mjs',
  command: (dir) => {
    // `--permission` since Node 22.13; Node 20 spells it `--experimental-permission`.
    const flag = process.allowedNodeEnvironmentFlags.has('--permission')
      ? '--permission'
      : '--experimental-permission'
    return {
      command: process.execPath,
      args: [flag, `--allow-fs-read=${dir}`, `--allow-fs-write=${dir}`, '--no-warnings', 'main.mjs'],
    }
  },
}

/**
 * Python 3 in isolated mode (`-I`: no `PYTHON*` variables, no user site-packages). Python has no
 * file-system sandbox: the program can read what the host user can.
 */
export const pythonInterpreter: Interpreter = {
  file: 'main.py',
  command: () => ({ command: 'python3', args: ['-I', 'main.py'] }),
}

/** The languages the example's code tool runs, with the names models put on code fences. */
export const DEFAULT_INTERPRETERS: Readonly<Record<string, Interpreter>> = Object.freeze({
  javascript: nodeInterpreter,
  js: nodeInterpreter,
  python: pythonInterpreter,
  py: pythonInterpreter,
})
