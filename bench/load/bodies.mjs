// The worst bodies one client may send within sagaway's limits (issue 19): each about 1 MB
// (under `gateway.limits.bodyLimit`) and each a JSON object with a `title`, so that the todo
// example's create saga stores it. `arrays` is the body of the hostile review (330,000 empty
// arrays); the others stay within `gateway.limits.maxValues` (10,000) and are stored.
const MB = 1024 * 1024;
const fill = (prefix, suffix) => prefix + 'y'.repeat(MB - 64 - prefix.length - suffix.length) + suffix;

/** name -> [what it is, JSON text] */
export const BODIES = {
  arrays: [
    "330,000 empty arrays (the review's body)",
    `{"title":"x","a":[${Array(Math.floor((MB - 64) / 3))
      .fill('[]')
      .join(',')}]}`,
  ],
  values: [
    '9,990 strings of 100 characters (most values allowed)',
    `{"title":"x","a":[${Array(9990)
      .fill(`"${'y'.repeat(100)}"`)
      .join(',')}]}`,
  ],
  keys: [
    '9,990 distinct keys, then a long string',
    fill(`{"title":"x","o":{${Array.from({ length: 9990 }, (_, i) => `"k${i}":${i}`).join(',')}},"s":"`, '"}'),
  ],
  deep: [
    '62 nested arrays around a long string (under the depth limit)',
    fill(`{"title":"x","a":${'['.repeat(62)}"`, `"${']'.repeat(62)}}`),
  ],
  string: ['one string of 1 MB', fill('{"title":"x","s":"', '"}')],
};
