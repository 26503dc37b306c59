/** Reports an issue at a path of a file (the loader locates it as FILE:LINE:COL PATH). */
export type Report = (
  file: string,
  at: readonly (string | number)[],
  message: string,
  severity?: 'error' | 'warning',
) => void;
