// The agui inspector: runs an AG-UI agent from the browser and shows what it sends.
//
// One file, no dependencies, no build step. It POSTs a RunAgentInput to the page's own URL,
// reads the SSE answer with fetch streaming, and for every event: checks it (a small port of
// agui.verify's ordering rules, named with agui's kebab-case rule names), applies it the way the
// official client does (messages, tool calls, reasoning, state with JSON Patch), and logs it.
// The DOM is built with createElement and textContent only: nothing the agent sends is parsed
// as HTML.
(function inspector() {
  'use strict';

  // -- rules: the values of agui.verify.Rule ---------------------------------------------------

  const RULE = Object.freeze({
    FIRST_EVENT_NOT_RUN_STARTED: 'first-event-not-run-started',
    NESTED_RUN_STARTED: 'nested-run-started',
    EVENT_AFTER_RUN_FINISHED: 'event-after-run-finished',
    EVENT_AFTER_RUN_ERROR: 'event-after-run-error',
    RUN_ID_MISMATCH: 'run-id-mismatch',
    THREAD_ID_MISMATCH: 'thread-id-mismatch',
    RUN_ID_REUSED: 'run-id-reused',
    OPEN_BLOCKS_AT_RUN_FINISHED: 'open-blocks-at-run-finished',
    DUPLICATE_INTERRUPT_ID: 'duplicate-interrupt-id',
    PENDING_CALL_UNKNOWN: 'pending-call-unknown',
    PENDING_CALL_ANSWERED: 'pending-call-answered',
    TRUNCATED: 'truncated',
    MESSAGE_ALREADY_OPEN: 'message-already-open',
    MESSAGE_NOT_OPEN: 'message-not-open',
    TOOL_CALL_ALREADY_OPEN: 'tool-call-already-open',
    TOOL_CALL_NOT_OPEN: 'tool-call-not-open',
    TOOL_CALL_ID_REUSED: 'tool-call-id-reused',
    TOOL_RESULT_BEFORE_END: 'tool-result-before-end',
    TOOL_RESULT_UNKNOWN_CALL: 'tool-result-unknown-call',
    STEP_ALREADY_OPEN: 'step-already-open',
    STEP_NOT_OPEN: 'step-not-open',
    STEP_OWNER_MISMATCH: 'step-owner-mismatch',
    REASONING_ALREADY_OPEN: 'reasoning-already-open',
    REASONING_NOT_OPEN: 'reasoning-not-open',
    REASONING_MESSAGE_ALREADY_OPEN: 'reasoning-message-already-open',
    REASONING_MESSAGE_NOT_OPEN: 'reasoning-message-not-open',
    CHUNK_MISSING_ID: 'chunk-missing-id',
    CHUNK_MISSING_NAME: 'chunk-missing-name',
    CHUNK_CONFLICT: 'chunk-conflict',
    CHUNK_AMBIGUOUS: 'chunk-ambiguous',
    SUBAGENT_ALREADY_ACTIVE: 'subagent-already-active',
    SUBAGENT_ID_REUSED: 'subagent-id-reused',
    SUBAGENT_PARENT_NOT_STARTED: 'subagent-parent-not-started',
    SUBAGENT_NOT_ACTIVE: 'subagent-not-active',
    SUBAGENT_ACTIVE_AT_RUN_FINISHED: 'subagent-active-at-run-finished',
    SUBAGENT_ATTRIBUTION_MISMATCH: 'subagent-attribution-mismatch',
  });

  // -- small helpers -----------------------------------------------------------------------------

  const hasOwn = (object, key) => Object.prototype.hasOwnProperty.call(object, key);
  const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);
  const present = (value) => value !== undefined && value !== null;
  const clone = (value) => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));
  const show = (value) => {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 80 ? `${text.slice(0, 77)}...` : text;
  };

  // Sets a member even when its name is "__proto__" (assignment would set the prototype).
  function setMember(object, key, value) {
    Object.defineProperty(object, key, {
      value, writable: true, enumerable: true, configurable: true,
    });
  }

  // A random UUID; crypto.randomUUID exists only in secure contexts (https, localhost).
  function uuid() {
    if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  class Violation extends Error {
    constructor(rule, message) {
      super(message);
      this.rule = rule;
    }
  }

  // -- SSE: split a byte stream into the data of its frames --------------------------------------

  // Frames end at a blank line; lines end with LF, CRLF or CR (a CR at the end of one chunk may
  // be the first half of a CRLF, so it waits for the next). `data:` lines make the frame (one
  // space after the colon is dropped; several are joined with LF) and an `id:` line names it
  // (passed along, or null without one); comments and other fields are skipped, and so is a
  // frame without data.
  class SSEParser {
    constructor(onData) {
      this.onData = onData;
      this.decoder = new TextDecoder('utf-8');
      this.buffer = '';
      this.scanned = 0; // the buffer holds no frame end before this index
      this.heldCR = false;
      this.comments = 0;
    }

    push(bytes) {
      this.feed(this.decoder.decode(bytes, { stream: true }));
    }

    // Ends the stream; returns the text of an unfinished frame, which is discarded (or '').
    end() {
      this.feed(this.decoder.decode());
      if (this.heldCR) this.feed('\n');
      const rest = this.buffer;
      this.buffer = '';
      this.scanned = 0;
      return rest.trim() ? rest : '';
    }

    feed(text) {
      if (!text) return;
      if (this.heldCR) {
        text = `\r${text}`;
        this.heldCR = false;
      }
      if (text.endsWith('\r')) {
        this.heldCR = true;
        text = text.slice(0, -1);
      }
      this.buffer += text.replace(/\r\n?/g, '\n');
      // Search only the new text (and the character before it): a large frame arriving in many
      // pieces is scanned once, not once per piece.
      let end = this.buffer.indexOf('\n\n', Math.max(0, this.scanned - 1));
      while (end >= 0) {
        const frame = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        this.frame(frame);
        end = this.buffer.indexOf('\n\n');
      }
      this.scanned = this.buffer.length;
    }

    frame(text) {
      const data = [];
      let id = null;
      for (const line of text.split('\n')) {
        if (line.startsWith(':')) {
          this.comments += 1;
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') data.push(value);
        else if (field === 'id' && !value.includes('\0')) id = value;
      }
      if (data.length) this.onData(data.join('\n'), id);
    }
  }

  // -- JSON Patch (RFC 6902) ---------------------------------------------------------------------

  class PatchError extends Error {}

  const PATCH_OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);
  const INDEX = /^(0|[1-9][0-9]*)$/;

  function pointer(op, member) {
    if (!hasOwn(op, member)) throw new PatchError(`it has no '${member}' member`);
    const text = op[member];
    if (typeof text !== 'string') throw new PatchError(`'${member}' is ${show(text)}, not a string`);
    if (text && (text[0] !== '/' || /~([^01]|$)/.test(text))) {
      throw new PatchError(`${member} ${show(text)} is not a JSON Pointer`);
    }
    // RFC 6901: "~1" first, so "~01" is the key "~1".
    return text.split('/').slice(1).map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
  }

  function arrayIndex(array, token, path, { append = false } = {}) {
    if (append && token === '-') return array.length;
    if (!INDEX.test(token)) throw new PatchError(`path ${show(path)}: ${show(token)} is not an array index`);
    const index = Number(token);
    if (index >= array.length + (append ? 1 : 0)) {
      throw new PatchError(`path ${show(path)} does not exist: the array has ${array.length} items`);
    }
    return index;
  }

  function child(node, token, path) {
    if (Array.isArray(node)) return node[arrayIndex(node, token, path)];
    if (isObject(node) && hasOwn(node, token)) return node[token];
    throw new PatchError(`path ${show(path)} does not exist`);
  }

  function resolve(root, tokens, path) {
    let node = root;
    for (const token of tokens) node = child(node, token, path);
    return node;
  }

  function jsonEqual(a, b) {
    if (a === b) return true;
    if (Array.isArray(a)) {
      return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
    }
    if (isObject(a) && isObject(b)) {
      const keys = Object.keys(a);
      return keys.length === Object.keys(b).length
        && keys.every((key) => hasOwn(b, key) && jsonEqual(a[key], b[key]));
    }
    return false;
  }

  // Each step returns the new root: the document may be replaced as a whole ('' path).
  function put(root, tokens, value, insert, path) {
    if (!tokens.length) return value;
    const parent = resolve(root, tokens.slice(0, -1), path);
    const last = tokens[tokens.length - 1];
    if (Array.isArray(parent)) {
      if (insert) parent.splice(arrayIndex(parent, last, path, { append: true }), 0, value);
      else parent[arrayIndex(parent, last, path)] = value;
    } else if (isObject(parent)) {
      if (!insert && !hasOwn(parent, last)) throw new PatchError(`path ${show(path)} does not exist`);
      setMember(parent, last, value);
    } else {
      throw new PatchError(`path ${show(path)} does not exist: its parent is not a container`);
    }
    return root;
  }

  function pop(root, tokens, path) {
    if (!tokens.length) throw new PatchError('the whole document cannot be removed; replace it');
    const parent = resolve(root, tokens.slice(0, -1), path);
    const last = tokens[tokens.length - 1];
    const value = child(parent, last, path);
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
    return value;
  }

  function applyOp(root, op) {
    const name = op.op;
    if (name === 'add' || name === 'replace' || name === 'test') {
      if (!hasOwn(op, 'value')) throw new PatchError("it has no 'value' member");
    }
    const path = op.path;
    switch (name) {
      case 'add':
        return put(root, pointer(op, 'path'), clone(op.value), true, path);
      case 'replace':
        return put(root, pointer(op, 'path'), clone(op.value), false, path);
      case 'remove':
        pop(root, pointer(op, 'path'), path);
        return root;
      case 'move': {
        const source = pointer(op, 'from');
        const target = pointer(op, 'path');
        const same = source.length === target.length && source.every((t, i) => t === target[i]);
        if (same) {
          resolve(root, source, op.from);
          return root;
        }
        if (source.length < target.length && source.every((t, i) => t === target[i])) {
          throw new PatchError(`from ${show(op.from)} contains path ${show(path)}: a value cannot move into itself`);
        }
        const value = pop(root, source, op.from);
        return put(root, target, value, true, path);
      }
      case 'copy': {
        const value = clone(resolve(root, pointer(op, 'from'), op.from));
        return put(root, pointer(op, 'path'), value, true, path);
      }
      case 'test': {
        const actual = resolve(root, pointer(op, 'path'), path);
        if (!jsonEqual(actual, op.value)) {
          throw new PatchError(`test failed: path ${show(path)} holds ${show(actual)}, not ${show(op.value)}`);
        }
        return root;
      }
      default:
        throw new PatchError(`unknown op ${show(name)}`);
    }
  }

  // Applies `ops` to a copy of `doc`, all or nothing. An op whose name is not one of RFC 6902's
  // six is dropped with a warning, as the official client does; any other failure throws a
  // PatchError naming the operation, and the caller keeps its document.
  function applyPatch(doc, ops) {
    if (!Array.isArray(ops)) throw new PatchError('a patch is an array of operations');
    let root = clone(doc);
    const dropped = [];
    ops.forEach((op, index) => {
      if (isObject(op) && typeof op.op === 'string' && !PATCH_OPS.has(op.op)) {
        dropped.push(`operation ${index}: unknown op ${show(op.op)} dropped`);
        return;
      }
      try {
        if (!isObject(op)) throw new PatchError('it is not an object with "op" and "path"');
        root = applyOp(root, op);
      } catch (error) {
        const label = isObject(op) && typeof op.op === 'string' ? ` (${op.op})` : '';
        throw new PatchError(`operation ${index}${label}: ${error.message}`);
      }
    });
    return { doc: root, dropped };
  }

  // -- the shape of each event: what the official client's schemas refuse ------------------------

  // Field kinds: 's' string, 'o' object, 'a' array, 'b' boolean, 'c' text content (string or
  // array), '*' any value but undefined; an array lists the allowed strings. A `?` suffix on a
  // name makes the field optional (absent is fine; null is refused unless NULLABLE says so).
  const TEXT_ROLES = ['developer', 'system', 'assistant', 'user'];
  const SHAPES = {
    RUN_STARTED: { threadId: 's', runId: 's', 'parentRunId?': 's', 'protocolVersion?': 's', 'input?': 'o' },
    RUN_FINISHED: { threadId: 's', runId: 's', 'outcome?': 'o', 'result?': '*', 'usage?': 'a' },
    RUN_ERROR: { message: 's', 'code?': 's', 'usage?': 'a' },
    STEP_STARTED: { stepName: 's' },
    STEP_FINISHED: { stepName: 's' },
    TEXT_MESSAGE_START: { messageId: 's', 'role?': TEXT_ROLES, 'name?': 's' },
    TEXT_MESSAGE_CONTENT: { messageId: 's', delta: 's' },
    TEXT_MESSAGE_END: { messageId: 's' },
    TEXT_MESSAGE_CHUNK: { 'messageId?': 's', 'role?': TEXT_ROLES, 'delta?': 's', 'name?': 's' },
    TOOL_CALL_START: { toolCallId: 's', toolCallName: 's', 'parentMessageId?': 's' },
    TOOL_CALL_ARGS: { toolCallId: 's', delta: 's' },
    TOOL_CALL_END: { toolCallId: 's' },
    TOOL_CALL_CHUNK: { 'toolCallId?': 's', 'toolCallName?': 's', 'parentMessageId?': 's', 'delta?': 's' },
    TOOL_CALL_RESULT: { messageId: 's', toolCallId: 's', content: 'c', 'role?': ['tool'] },
    STATE_SNAPSHOT: { snapshot: '*' },
    STATE_DELTA: { delta: 'a' },
    MESSAGES_SNAPSHOT: { messages: 'a' },
    ACTIVITY_SNAPSHOT: { messageId: 's', activityType: 's', content: 'o', 'replace?': 'b' },
    ACTIVITY_DELTA: { messageId: 's', activityType: 's', patch: 'a' },
    RAW: { event: '*', 'source?': 's' },
    CUSTOM: { name: 's', value: '*' },
    REASONING_START: { messageId: 's' },
    REASONING_MESSAGE_START: { messageId: 's', role: ['reasoning'] },
    REASONING_MESSAGE_CONTENT: { messageId: 's', delta: 's' },
    REASONING_MESSAGE_END: { messageId: 's' },
    REASONING_MESSAGE_CHUNK: { 'messageId?': 's', 'delta?': 's' },
    REASONING_END: { messageId: 's' },
    REASONING_ENCRYPTED_VALUE: {
      subtype: ['tool-call', 'message'], entityId: 's', encryptedValue: 's', 'encryptedValueType?': 's',
    },
    SUBAGENT_STARTED: {
      subagentRunId: 's', name: 's', 'description?': 's', 'parentSubagentRunId?': 's',
      'parentToolCallId?': 's', 'parentMessageId?': 's',
    },
    SUBAGENT_FINISHED: { subagentRunId: 's', 'result?': '*', 'outcome?': 'o' },
    SUBAGENT_ERROR: { subagentRunId: 's', message: 's', 'code?': 's' },
  };
  const LEGACY = new Set([
    'THINKING_START', 'THINKING_END', 'THINKING_TEXT_MESSAGE_START',
    'THINKING_TEXT_MESSAGE_CONTENT', 'THINKING_TEXT_MESSAGE_END',
  ]);
  // Legacy nulls the official client strips with a warning instead of failing.
  const NULLABLE = new Set(['parentMessageId', 'outcome', 'result', 'rawEvent']);
  const RUN_SCOPED = new Set(['RUN_STARTED', 'RUN_FINISHED', 'RUN_ERROR', 'MESSAGES_SNAPSHOT']);

  function kindOk(kind, value) {
    if (Array.isArray(kind)) return kind.includes(value);
    switch (kind) {
      case 's': return typeof value === 'string';
      case 'o': return isObject(value);
      case 'a': return Array.isArray(value);
      case 'b': return typeof value === 'boolean';
      case 'c': return typeof value === 'string' || Array.isArray(value);
      default: return true;
    }
  }

  function kindName(kind) {
    if (Array.isArray(kind)) return `one of ${kind.map((v) => JSON.stringify(v)).join(', ')}`;
    return {
      s: 'a string', o: 'an object', a: 'an array', b: 'a boolean', c: 'a string or an array of parts',
    }[kind] || 'a value';
  }

  // Why `event` is malformed (as the official client's schema would refuse it), or null; notes
  // collects what the client tolerates with a warning (legacy nulls).
  function malformed(event, notes) {
    const shape = SHAPES[event.type];
    const problems = [];
    const field = (name, kind, optional) => {
      const value = event[name];
      if (value === undefined) {
        if (!optional) problems.push(`${event.type} needs '${name}'`);
      } else if (value === null && optional && NULLABLE.has(name)) {
        notes.push(`'${name}: null' is a legacy shape; the client removes it`);
      } else if (value === null && kind !== '*') {
        problems.push(`${event.type} has '${name}: null'; the field is optional, omit it`);
      } else if (!kindOk(kind, value)) {
        problems.push(`${event.type}.${name} must be ${kindName(kind)}, not ${show(value)}`);
      }
    };
    for (const [key, kind] of Object.entries(shape)) {
      const optional = key.endsWith('?');
      field(optional ? key.slice(0, -1) : key, kind, optional);
    }
    if (event.timestamp !== undefined && !Number.isInteger(event.timestamp)) {
      problems.push(`timestamp must be an integer, not ${show(event.timestamp)}`);
    }
    if (event.metadata !== undefined && !isObject(event.metadata)) {
      problems.push(`metadata must be an object, not ${show(event.metadata)}`);
    }
    if (event.rawEvent === null) notes.push("'rawEvent: null' is a legacy shape; the client removes it");
    if (hasOwn(event, 'subagentRunId') && !RUN_SCOPED.has(event.type) && !shape.subagentRunId) {
      if (typeof event.subagentRunId !== 'string') {
        problems.push(`subagentRunId must be a string, not ${show(event.subagentRunId)}; omit it for the parent agent`);
      }
    }
    if (event.type === 'RUN_FINISHED' && isObject(event.outcome)) {
      const outcome = event.outcome;
      if (outcome.type === 'interrupt' && (!Array.isArray(outcome.interrupts) || !outcome.interrupts.length
          || !outcome.interrupts.every((i) => isObject(i) && typeof i.id === 'string' && typeof i.reason === 'string'))) {
        problems.push('an interrupt outcome lists one or more interrupts, each with a string id and reason');
      } else if (!['success', 'interrupt', 'cancelled'].includes(outcome.type)) {
        notes.push(`unknown outcome type ${show(outcome.type)}: the client removes the outcome, which reads as success`);
      }
    }
    return problems.length ? problems.join('; ') : null;
  }

  // -- chunk expansion: *_CHUNK events become START / CONTENT / END, one stream per lane ---------

  const TEXT = 0;
  const TOOL = 1;
  const THOUGHT = 2;
  const SPAN = 3;
  const KINDS = [
    {
      label: 'text message', ownerLabel: 'message', start: 'TEXT_MESSAGE_START', content: 'TEXT_MESSAGE_CONTENT',
      end: 'TEXT_MESSAGE_END', already: RULE.MESSAGE_ALREADY_OPEN, notOpen: RULE.MESSAGE_NOT_OPEN,
      chunk: 'TEXT_MESSAGE_CHUNK', idField: 'messageId', fields: ['role', 'name'],
    },
    {
      label: 'tool call', ownerLabel: 'tool call', start: 'TOOL_CALL_START', content: 'TOOL_CALL_ARGS',
      end: 'TOOL_CALL_END', already: RULE.TOOL_CALL_ALREADY_OPEN, notOpen: RULE.TOOL_CALL_NOT_OPEN,
      chunk: 'TOOL_CALL_CHUNK', idField: 'toolCallId', fields: ['toolCallName', 'parentMessageId'],
    },
    {
      label: 'reasoning message', ownerLabel: 'reasoning message', start: 'REASONING_MESSAGE_START',
      content: 'REASONING_MESSAGE_CONTENT', end: 'REASONING_MESSAGE_END',
      already: RULE.REASONING_MESSAGE_ALREADY_OPEN, notOpen: RULE.REASONING_MESSAGE_NOT_OPEN,
      chunk: 'REASONING_MESSAGE_CHUNK', idField: 'messageId', fields: [],
    },
    {
      label: 'reasoning span', ownerLabel: 'reasoning message', start: 'REASONING_START', content: '',
      end: 'REASONING_END', already: RULE.REASONING_ALREADY_OPEN, notOpen: RULE.REASONING_NOT_OPEN,
      chunk: '', idField: 'messageId', fields: [],
    },
  ];
  const CHUNK_KIND = { TEXT_MESSAGE_CHUNK: TEXT, TOOL_CALL_CHUNK: TOOL, REASONING_MESSAGE_CHUNK: THOUGHT };
  const PASS_THROUGH = new Set([
    'RAW', 'ACTIVITY_SNAPSHOT', 'ACTIVITY_DELTA', 'REASONING_ENCRYPTED_VALUE', 'SUBAGENT_STARTED',
  ]);
  const who = (owner) => (owner === null ? '(the parent agent)' : owner);

  class Expander {
    constructor() {
      this.lanes = new Map(); // lane (subagentRunId, or null for the parent) -> open chunk stream
      this.thinking = { span: null, message: null, minted: 0 };
    }

    save() {
      return { lanes: new Map(this.lanes), thinking: { ...this.thinking } };
    }

    restore(saved) {
      this.lanes = saved.lanes;
      this.thinking = saved.thinking;
    }

    // The explicit events `event` stands for (a chunk's START/CONTENT/END, the END of a chunk
    // stream it closes, the REASONING_* of a legacy THINKING_* event); throws a Violation.
    expand(event) {
      if (LEGACY.has(event.type)) return this.translate(event);
      const type = event.type;
      if (type in CHUNK_KIND) return this.chunk(CHUNK_KIND[type], event);
      if (PASS_THROUGH.has(type)) return [event];
      if (type === 'RUN_ERROR' || type === 'RUN_STARTED') {
        this.lanes.clear(); // the run's end closes every stream; nothing is left to check
        return [event];
      }
      if (type === 'RUN_FINISHED' || type === 'MESSAGES_SNAPSHOT') {
        const ends = [...this.lanes.keys()].map((lane) => this.close(lane));
        return [...ends, event];
      }
      const lane = type === 'SUBAGENT_FINISHED' || type === 'SUBAGENT_ERROR'
        ? event.subagentRunId : (event.subagentRunId ?? null);
      return this.lanes.has(lane) ? [this.close(lane), event] : [event];
    }

    close(lane) {
      const stream = this.lanes.get(lane);
      this.lanes.delete(lane);
      return this.synth(KINDS[stream.kind].end, stream.kind, stream.id, lane, {});
    }

    synth(type, kind, id, lane, extra) {
      const event = { type, [KINDS[kind].idField]: id, ...extra, synthesized: true };
      if (lane !== null) event.subagentRunId = lane;
      return event;
    }

    chunk(kind, event) {
      const spec = KINDS[kind];
      const id = event[spec.idField] ?? null;
      const lane = this.lane(kind, id, event.subagentRunId ?? null);
      const stream = this.lanes.get(lane);
      const incoming = spec.fields.map((name) => event[name] ?? null);
      const out = [];
      if (!stream || stream.kind !== kind || (id !== null && id !== stream.id)) {
        if (id === null) throw new Violation(RULE.CHUNK_MISSING_ID, `First ${spec.chunk} must have a ${spec.idField}`);
        if (kind === TOOL && incoming[0] === null) {
          throw new Violation(RULE.CHUNK_MISSING_NAME, 'First TOOL_CALL_CHUNK must have a toolCallName');
        }
        if (stream) out.push(this.close(lane));
        const start = {};
        if (kind === TEXT) {
          start.role = incoming[0] ?? 'assistant';
          if (incoming[1] !== null) start.name = incoming[1];
          incoming[0] = start.role;
        } else if (kind === TOOL) {
          start.toolCallName = incoming[0];
          if (incoming[1] !== null) start.parentMessageId = incoming[1];
        } else {
          start.role = 'reasoning';
        }
        if (event.metadata !== undefined) start.metadata = event.metadata;
        out.push(this.synth(spec.start, kind, id, lane, start));
        this.lanes.set(lane, { kind, id, established: incoming });
      } else {
        spec.fields.forEach((name, i) => {
          const value = incoming[i];
          const was = stream.established[i];
          if (value !== null && value !== was) {
            const shown = was === null ? '(absent)' : `'${was}'`;
            throw new Violation(RULE.CHUNK_CONFLICT, `Cannot continue ${spec.label} '${stream.id}': chunk ${name} '${value}' does not match the open stream's ${name} ${shown}.`);
          }
        });
      }
      if (event.delta !== undefined || event.rawEvent !== undefined || event.metadata !== undefined) {
        const content = { delta: event.delta ?? '' };
        if (event.metadata !== undefined) content.metadata = event.metadata;
        out.push(this.synth(spec.content, kind, this.lanes.get(lane).id, lane, content));
      }
      return out;
    }

    lane(kind, id, tag) {
      const spec = KINDS[kind];
      if (id !== null) {
        for (const [lane, stream] of this.lanes) {
          if (stream.kind === kind && stream.id === id) {
            if (tag !== null && tag !== lane) {
              throw new Violation(RULE.SUBAGENT_ATTRIBUTION_MISMATCH, `Cannot continue ${spec.label} '${id}': chunk subagentRunId '${tag}' does not match the open stream's subagent '${who(lane)}'.`);
            }
            return lane;
          }
        }
        return tag;
      }
      const parent = this.lanes.get(null);
      if (tag !== null || (parent && parent.kind === kind)) return tag;
      const lanes = [...this.lanes].filter(([, stream]) => stream.kind === kind).map(([lane]) => lane);
      if (lanes.length > 1) {
        throw new Violation(RULE.CHUNK_AMBIGUOUS, `Ambiguous ${spec.chunk}: it carries neither a ${spec.idField} nor a subagentRunId, but ${lanes.length} lanes have an open ${spec.label}. Attribute the chunk to the subagent it belongs to.`);
      }
      return lanes.length ? lanes[0] : null;
    }

    // THINKING_* (AG-UI 0.x) as the REASONING_* events the 1.0 client translates them to.
    translate(event) {
      const state = this.thinking;
      const base = { synthesized: true };
      if (event.subagentRunId !== undefined) base.subagentRunId = event.subagentRunId;
      switch (event.type) {
        case 'THINKING_START':
          state.minted += 1;
          state.span = `thinking-${state.minted}`;
          return [{ ...base, type: 'REASONING_START', messageId: state.span }];
        case 'THINKING_END':
          return [{ ...base, type: 'REASONING_END', messageId: state.span ?? 'thinking' }];
        case 'THINKING_TEXT_MESSAGE_START':
          state.minted += 1;
          state.message = `thinking-message-${state.minted}`;
          return [{ ...base, type: 'REASONING_MESSAGE_START', messageId: state.message, role: 'reasoning' }];
        case 'THINKING_TEXT_MESSAGE_CONTENT':
          return [{
            ...base, type: 'REASONING_MESSAGE_CONTENT', messageId: state.message ?? 'thinking-message', delta: String(event.delta ?? ''),
          }];
        default:
          return [{ ...base, type: 'REASONING_MESSAGE_END', messageId: state.message ?? 'thinking-message' }];
      }
    }
  }

  // -- the ordering verifier: agui.verify's rules over explicit events ---------------------------

  const NONE = 0;
  const RUNNING = 1;
  const FINISHED = 2;
  const ERRORED = 3;
  const AT_FINISH = [[TEXT, 'text messages'], [THOUGHT, 'reasoning messages'], [SPAN, 'reasoning spans'], [TOOL, 'tool calls']];
  const agentName = (owner) => (owner === null ? 'the parent agent' : `subagent '${owner}'`);

  class Verifier {
    constructor(knownCalls = []) {
      this.phase = NONE;
      this.streamThread = null;
      this.threadId = null;
      this.runId = null;
      this.runIds = new Set(); // every run the stream has started
      this.open = [new Set(), new Set(), new Set(), new Set()];
      const reasoningOwners = new Map();
      this.owners = [new Map(), new Map(), reasoningOwners, reasoningOwners];
      this.activityOwners = new Map();
      this.knownCalls = new Set(knownCalls);
      this.steps = new Map(); // JSON [owner, name] -> [owner, name]
      this.subagents = new Set();
      this.ended = new Set();
      this.runCalls = new Set(); // the calls this run started, and those it answered
      this.runAnswered = new Set();
    }

    save() {
      const reasoning = new Map(this.owners[THOUGHT]);
      return {
        phase: this.phase, streamThread: this.streamThread, threadId: this.threadId, runId: this.runId,
        runIds: new Set(this.runIds),
        open: this.open.map((set) => new Set(set)),
        owners: [new Map(this.owners[TEXT]), new Map(this.owners[TOOL]), reasoning, reasoning],
        activityOwners: new Map(this.activityOwners), knownCalls: new Set(this.knownCalls),
        steps: new Map(this.steps), subagents: new Set(this.subagents), ended: new Set(this.ended),
        runCalls: new Set(this.runCalls), runAnswered: new Set(this.runAnswered),
      };
    }

    restore(saved) {
      Object.assign(this, saved);
    }

    get running() {
      return this.phase === RUNNING;
    }

    // Accepts one explicit event or throws a Violation; the caller restores a saved state.
    observe(event) {
      const type = event.type;
      if (this.phase !== RUNNING && type !== 'RUN_STARTED' && type !== 'RUN_ERROR') this.outsideRun(type);
      const tag = event.subagentRunId ?? null;
      switch (type) {
        case 'RUN_STARTED': return this.runStarted(event);
        case 'RUN_FINISHED': return this.runFinished(event);
        case 'RUN_ERROR':
          if (this.phase === ERRORED) this.outsideRun(type);
          this.phase = ERRORED;
          return undefined;
        case 'TEXT_MESSAGE_START': return this.start(TEXT, event.messageId, tag, null);
        case 'TEXT_MESSAGE_CONTENT': return this.touch(type, TEXT, event.messageId, tag, false);
        case 'TEXT_MESSAGE_END': return this.touch(type, TEXT, event.messageId, tag, true);
        case 'TOOL_CALL_START': return this.start(TOOL, event.toolCallId, tag, event.parentMessageId ?? null);
        case 'TOOL_CALL_ARGS': return this.touch(type, TOOL, event.toolCallId, tag, false);
        case 'TOOL_CALL_END': return this.touch(type, TOOL, event.toolCallId, tag, true);
        case 'TOOL_CALL_RESULT': return this.toolResult(event, tag);
        case 'REASONING_START': return this.start(SPAN, event.messageId, tag, null);
        case 'REASONING_END': return this.touch(type, SPAN, event.messageId, tag, true);
        case 'REASONING_MESSAGE_START': return this.start(THOUGHT, event.messageId, tag, null);
        case 'REASONING_MESSAGE_CONTENT': return this.touch(type, THOUGHT, event.messageId, tag, false);
        case 'REASONING_MESSAGE_END': return this.touch(type, THOUGHT, event.messageId, tag, true);
        case 'REASONING_ENCRYPTED_VALUE': return this.encryptedValue(event, tag);
        case 'STEP_STARTED': return this.stepStarted(event.stepName, tag);
        case 'STEP_FINISHED': return this.stepFinished(event.stepName, tag);
        case 'MESSAGES_SNAPSHOT': return this.seed(event.messages, true);
        case 'ACTIVITY_SNAPSHOT':
          if (!this.activityOwners.has(event.messageId) || event.replace !== false) {
            this.activityOwners.set(event.messageId, tag);
          }
          return undefined;
        case 'ACTIVITY_DELTA':
          if (tag !== null && this.activityOwners.has(event.messageId) && this.activityOwners.get(event.messageId) !== tag) {
            this.mismatch(type, tag, 'activity', event.messageId, this.activityOwners.get(event.messageId));
          }
          return undefined;
        case 'SUBAGENT_STARTED': return this.subagentStarted(event);
        case 'SUBAGENT_FINISHED':
        case 'SUBAGENT_ERROR': return this.subagentEnded(event);
        default: return undefined; // STATE_*, CUSTOM, RAW: ordered only by the run's lifecycle
      }
    }

    // Whether the stream may end here; throws the `truncated` Violation when it may not.
    finish() {
      if (this.phase === RUNNING || this.phase === NONE) {
        const what = this.phase === RUNNING ? `run '${this.runId}' is still active` : 'no run was started';
        throw new Violation(RULE.TRUNCATED, `The stream ended without a terminal event: ${what}. End every run with 'RUN_FINISHED' or 'RUN_ERROR'.`);
      }
    }

    outsideRun(type) {
      if (this.phase === ERRORED) {
        throw new Violation(RULE.EVENT_AFTER_RUN_ERROR, `Cannot send event type '${type}': The run has already errored with 'RUN_ERROR'. No further events can be sent.`);
      }
      if (this.phase === FINISHED) {
        throw new Violation(RULE.EVENT_AFTER_RUN_FINISHED, `Cannot send event type '${type}': The run has already finished with 'RUN_FINISHED'. Start a new run with 'RUN_STARTED'.`);
      }
      throw new Violation(RULE.FIRST_EVENT_NOT_RUN_STARTED, `First event must be 'RUN_STARTED' (or 'RUN_ERROR'), not '${type}'.`);
    }

    runStarted(event) {
      if (this.phase === RUNNING) {
        throw new Violation(RULE.NESTED_RUN_STARTED, `Cannot send 'RUN_STARTED' while a run is still active. The previous run must be finished with 'RUN_FINISHED' before starting a new run (run '${this.runId}' is active).`);
      }
      if (this.streamThread !== null && event.threadId !== this.streamThread) {
        throw new Violation(RULE.THREAD_ID_MISMATCH, `Cannot send 'RUN_STARTED' for thread '${event.threadId}': this stream belongs to thread '${this.streamThread}'. Every run on a stream carries the input's threadId.`);
      }
      if (this.runIds.has(event.runId)) {
        throw new Violation(RULE.RUN_ID_REUSED, `Cannot send 'RUN_STARTED' for run '${event.runId}': this stream has already run it. Each run on a thread has a runId of its own; give the new run a new one.`);
      }
      this.open.forEach((set) => set.clear());
      this.owners.forEach((map) => map.clear());
      this.activityOwners.clear();
      this.steps.clear();
      this.subagents.clear();
      this.ended.clear();
      this.runCalls.clear();
      this.runAnswered.clear();
      this.phase = RUNNING;
      this.threadId = event.threadId;
      this.runId = event.runId;
      this.runIds.add(event.runId);
      if (this.streamThread === null) this.streamThread = event.threadId;
      if (isObject(event.input) && Array.isArray(event.input.messages)) this.seed(event.input.messages, false);
    }

    runFinished(event) {
      if (event.runId !== this.runId) {
        throw new Violation(RULE.RUN_ID_MISMATCH, `Cannot send 'RUN_FINISHED' for run '${event.runId}': the run that is open is '${this.runId}'. A run's 'RUN_STARTED' and 'RUN_FINISHED' must agree on their runId.`);
      }
      if (event.threadId !== this.threadId) {
        throw new Violation(RULE.THREAD_ID_MISMATCH, `Cannot send 'RUN_FINISHED' for thread '${event.threadId}': run '${event.runId}' was started on thread '${this.threadId}'. A run's 'RUN_STARTED' and 'RUN_FINISHED' must agree on their threadId.`);
      }
      const steps = [...this.steps.values()].map(([owner, name]) => (owner === null ? name : `${name} (subagent '${owner}')`));
      if (steps.length) {
        throw new Violation(RULE.OPEN_BLOCKS_AT_RUN_FINISHED, `Cannot send 'RUN_FINISHED' while steps are still active: ${steps.join(', ')}`);
      }
      for (const [kind, what] of AT_FINISH) {
        if (this.open[kind].size) {
          throw new Violation(RULE.OPEN_BLOCKS_AT_RUN_FINISHED, `Cannot send 'RUN_FINISHED' while ${what} are still active: ${[...this.open[kind]].join(', ')}`);
        }
      }
      if (this.subagents.size) {
        throw new Violation(RULE.SUBAGENT_ACTIVE_AT_RUN_FINISHED, `Cannot send 'RUN_FINISHED' while subagents are still active: ${[...this.subagents].join(', ')}`);
      }
      const outcome = event.outcome;
      if (isObject(outcome) && outcome.type === 'interrupt' && Array.isArray(outcome.interrupts)) {
        const seen = new Set();
        for (const interrupt of outcome.interrupts) {
          if (seen.has(interrupt.id)) {
            throw new Violation(RULE.DUPLICATE_INTERRUPT_ID, `Cannot send 'RUN_FINISHED' with two interrupts carrying the id '${interrupt.id}'. An interrupt id is unique within the run: a resume entry answers it by id.`);
          }
          seen.add(interrupt.id);
        }
      }
      if (isObject(outcome) && outcome.type === 'success' && Array.isArray(outcome.pendingToolCallIds)) {
        for (const call of outcome.pendingToolCallIds) {
          if (!this.runCalls.has(call)) {
            throw new Violation(RULE.PENDING_CALL_UNKNOWN, `Cannot send 'RUN_FINISHED' with '${call}' in pendingToolCallIds: this run started no tool call of that id. List only the calls this run started and left for the client, or leave the list out and the client derives it.`);
          }
          if (this.runAnswered.has(call)) {
            throw new Violation(RULE.PENDING_CALL_ANSWERED, `Cannot send 'RUN_FINISHED' with '${call}' in pendingToolCallIds: this run already sent that call's TOOL_CALL_RESULT. List only the calls left without a result, or leave the list out and the client derives it.`);
          }
        }
      }
      this.phase = FINISHED;
    }

    start(kind, id, tag, parent) {
      const spec = KINDS[kind];
      if (this.open[kind].has(id)) {
        throw new Violation(spec.already, `Cannot send '${spec.start}' event: A ${spec.label} with ID '${id}' is already in progress. Complete it with '${spec.end}' first.`);
      }
      if (tag !== null) this.checkOwner(spec.start, kind, id, tag);
      const textOwners = this.owners[TEXT];
      if (parent !== null && textOwners.has(parent)) {
        const owner = textOwners.get(parent);
        const calls = this.owners[TOOL];
        if (tag !== null && tag !== owner) {
          throw new Violation(RULE.SUBAGENT_ATTRIBUTION_MISMATCH, `Cannot send 'TOOL_CALL_START': subagentRunId '${tag}' does not match its parent message '${parent}' owner '${who(owner)}'. A tool call belongs to the message that carries it.`);
        }
        if (tag === null && calls.has(id) && calls.get(id) !== owner) {
          throw new Violation(RULE.SUBAGENT_ATTRIBUTION_MISMATCH, `Cannot send 'TOOL_CALL_START': tool call '${id}' is owned by '${who(calls.get(id))}' but its parent message '${parent}' is owned by '${who(owner)}'. A tool call belongs to the message that carries it.`);
        }
      }
      if (kind === TOOL && this.knownCalls.has(id)) {
        throw new Violation(RULE.TOOL_CALL_ID_REUSED, `Cannot send 'TOOL_CALL_START': tool call '${id}' already exists (it was started earlier in this stream or is in the run input's history), and a client would overwrite that call with this one. Give each tool call an id of its own in the thread.`);
      }
      this.open[kind].add(id);
      if (kind === TOOL) this.runCalls.add(id);
      if (!this.owners[kind].has(id)) {
        const inherited = parent !== null && textOwners.has(parent) ? textOwners.get(parent) : null;
        this.owners[kind].set(id, tag !== null ? tag : inherited);
      }
      if (kind === TOOL) this.knownCalls.add(id);
    }

    touch(type, kind, id, tag, end) {
      const spec = KINDS[kind];
      if (!this.open[kind].has(id)) {
        const hint = type === spec.end && kind !== THOUGHT
          ? `A '${spec.start}' event must be sent first.`
          : `Start a ${spec.label} with '${spec.start}' first.`;
        throw new Violation(spec.notOpen, `Cannot send '${type}' event: No active ${spec.label} found with ID '${id}'. ${hint}`);
      }
      if (tag !== null) this.checkOwner(type, kind, id, tag);
      if (end) this.open[kind].delete(id);
    }

    checkOwner(type, kind, id, tag) {
      const owners = this.owners[kind];
      if (owners.has(id) && owners.get(id) !== tag) this.mismatch(type, tag, KINDS[kind].ownerLabel, id, owners.get(id));
    }

    mismatch(type, tag, label, id, owner) {
      throw new Violation(RULE.SUBAGENT_ATTRIBUTION_MISMATCH, `Cannot send '${type}': subagentRunId '${tag}' does not match the ${label} '${id}' opener's subagent '${who(owner)}'.`);
    }

    toolResult(event, tag) {
      const call = event.toolCallId;
      if (this.open[TOOL].has(call)) {
        throw new Violation(RULE.TOOL_RESULT_BEFORE_END, `Cannot send 'TOOL_CALL_RESULT' for tool call '${call}': the call is still in progress. Send its 'TOOL_CALL_END' before its result.`);
      }
      if (!this.knownCalls.has(call)) {
        throw new Violation(RULE.TOOL_RESULT_UNKNOWN_CALL, `Cannot send 'TOOL_CALL_RESULT' for tool call '${call}': no such call was started in this stream, sent in the run input, or declared known. A result answers a tool call.`);
      }
      this.runAnswered.add(call);
      this.owners[TEXT].set(event.messageId, tag);
    }

    encryptedValue(event, tag) {
      if (tag === null) return;
      let kind = TOOL;
      let label = 'tool call';
      if (event.subtype !== 'tool-call') {
        kind = this.owners[TEXT].has(event.entityId) ? TEXT : THOUGHT;
        label = 'message';
      }
      const owners = this.owners[kind];
      if (owners.has(event.entityId) && owners.get(event.entityId) !== tag) {
        this.mismatch(event.type, tag, label, event.entityId, owners.get(event.entityId));
      }
    }

    seed(messages, authoritative) {
      for (const message of messages) {
        if (!isObject(message) || typeof message.id !== 'string') continue;
        let owners = this.owners[TEXT];
        if (message.role === 'reasoning') owners = this.owners[THOUGHT];
        else if (message.role === 'activity') owners = this.activityOwners;
        const owner = message.subagentRunId ?? null;
        if (authoritative || !owners.has(message.id)) owners.set(message.id, owner);
        if (message.role === 'assistant' && Array.isArray(message.toolCalls)) {
          for (const call of message.toolCalls) {
            if (!isObject(call) || typeof call.id !== 'string') continue;
            this.knownCalls.add(call.id);
            if (authoritative || !this.owners[TOOL].has(call.id)) this.owners[TOOL].set(call.id, owner);
          }
        }
      }
    }

    stepStarted(name, tag) {
      const key = JSON.stringify([tag, name]);
      if (this.steps.has(key)) {
        const where = tag === null ? '' : ` in subagent '${tag}'`;
        throw new Violation(RULE.STEP_ALREADY_OPEN, `Step "${name}" is already active for 'STEP_STARTED'${where}`);
      }
      this.steps.set(key, [tag, name]);
    }

    stepFinished(name, tag) {
      const key = JSON.stringify([tag, name]);
      if (!this.steps.has(key)) {
        const others = [...this.steps.values()].filter(([, open]) => open === name).map(([owner]) => owner);
        if (!others.length) {
          throw new Violation(RULE.STEP_NOT_OPEN, `Cannot send 'STEP_FINISHED' for step "${name}" that was not started`);
        }
        throw new Violation(RULE.STEP_OWNER_MISMATCH, `Cannot send 'STEP_FINISHED' for step "${name}" attributed to ${agentName(tag)}: that step is open under ${agentName(others[0])}. A step must be finished by whoever started it.`);
      }
      this.steps.delete(key);
    }

    subagentStarted(event) {
      const run = event.subagentRunId;
      const parent = event.parentSubagentRunId ?? null;
      if (this.subagents.has(run)) {
        throw new Violation(RULE.SUBAGENT_ALREADY_ACTIVE, `Cannot send 'SUBAGENT_STARTED': subagent '${run}' is already active. Finish it with 'SUBAGENT_FINISHED' first.`);
      }
      if (this.ended.has(run)) {
        throw new Violation(RULE.SUBAGENT_ID_REUSED, `Cannot send 'SUBAGENT_STARTED': subagent '${run}' has already finished in this run. Subagent IDs are per-invocation and cannot be reused.`);
      }
      if (parent !== null && !this.ended.has(parent) && !this.subagents.has(parent)) {
        throw new Violation(RULE.SUBAGENT_PARENT_NOT_STARTED, `Cannot send 'SUBAGENT_STARTED': parentSubagentRunId '${parent}' has not been started in this run.`);
      }
      this.subagents.add(run);
    }

    subagentEnded(event) {
      const run = event.subagentRunId;
      if (!this.subagents.has(run)) {
        throw new Violation(RULE.SUBAGENT_NOT_ACTIVE, `Cannot send '${event.type}': no active subagent found with ID '${run}'. A 'SUBAGENT_STARTED' event must be sent first.`);
      }
      this.subagents.delete(run);
      this.ended.add(run);
    }
  }

  // -- the checker: one stream, frame by frame ---------------------------------------------------

  // What a frame is (parsed, malformed, unknown), the explicit events it stands for, and the
  // marks it earns: {kind: 'violation' | 'malformed' | 'warning' | 'note', rule?, message}.
  class Checker {
    constructor(knownCalls = []) {
      this.expander = new Expander();
      this.verifier = new Verifier(knownCalls);
      this.violations = 0;
    }

    frame(data) {
      let event;
      try {
        event = JSON.parse(data);
      } catch (error) {
        return this.bad(null, `the frame is not JSON: ${error.message}`);
      }
      if (!isObject(event)) return this.bad(event, 'the frame is not a JSON object');
      if (typeof event.type !== 'string' || !event.type) return this.bad(event, 'the frame carries no event type');
      return this.event(event);
    }

    event(event) {
      const marks = [];
      const result = { event, events: [], marks };
      if (!(event.type in SHAPES) && !LEGACY.has(event.type)) {
        marks.push({ kind: 'note', message: `unknown event type '${event.type}': the client drops it` });
        return result;
      }
      if (LEGACY.has(event.type)) {
        marks.push({ kind: 'note', message: `${event.type} is an AG-UI 0.x event; read as its REASONING_* equivalent` });
      } else {
        const notes = [];
        const problem = malformed(event, notes);
        notes.forEach((message) => marks.push({ kind: 'note', message }));
        if (problem) {
          this.violations += 1;
          marks.push({ kind: 'malformed', message: problem });
          return result;
        }
      }
      const saved = [this.expander.save(), this.verifier.save()];
      try {
        const events = this.expander.expand(event);
        events.forEach((explicit) => this.verifier.observe(explicit));
        result.events = events;
      } catch (error) {
        if (!(error instanceof Violation)) throw error;
        this.expander.restore(saved[0]);
        this.verifier.restore(saved[1]);
        this.violations += 1;
        marks.push({ kind: 'violation', rule: error.rule, message: error.message });
        // The inspector still shows what the event would do, as far as it can be applied.
        result.events = event.type in CHUNK_KIND ? [] : [event];
      }
      return result;
    }

    bad(event, message) {
      this.violations += 1;
      return { event, events: [], marks: [{ kind: 'malformed', message }] };
    }

    // The marks the end of the stream earns (the truncated rule).
    finish() {
      try {
        this.verifier.finish();
        return [];
      } catch (error) {
        this.violations += 1;
        return [{ kind: 'violation', rule: error.rule, message: error.message }];
      }
    }
  }

  // Checks and applies a whole stream of decoded events, starting from `messages`; returns what
  // a UI would hold afterwards. For tests and the console.
  function foldStream(events, messages = []) {
    const checker = new Checker();
    const conversation = new Conversation();
    conversation.messages = clone(messages);
    const warnings = [];
    for (const event of events) {
      if (!isObject(event) || typeof event.type !== 'string') continue;
      for (const explicit of checker.event(event).events) warnings.push(...conversation.apply(explicit));
    }
    return { messages: conversation.messages.map(plainMessage), state: conversation.state, warnings };
  }

  // Checks a whole stream of decoded events; for tests and the console.
  function checkStream(events, knownCalls = []) {
    const checker = new Checker(knownCalls);
    const marks = events.map((event, index) => {
      const result = isObject(event) && typeof event.type === 'string'
        ? checker.event(event) : checker.bad(event, 'the frame is not an event');
      return result.marks.map((mark) => ({ index, ...mark }));
    });
    return [...marks.flat(), ...checker.finish().map((mark) => ({ index: null, ...mark }))];
  }

  // -- the conversation: the official client's reducer (defaultApplyEvents) ----------------------

  const VIEW_ONLY = new Set(['streaming']);

  // A message as the protocol has it, without the page's own bookkeeping.
  function plainMessage(message) {
    const out = {};
    for (const [key, value] of Object.entries(message)) {
      if (!VIEW_ONLY.has(key)) setMember(out, key, clone(value));
    }
    if (Array.isArray(out.toolCalls)) {
      out.toolCalls = out.toolCalls.map((call) => {
        const copy = { ...call };
        delete copy.streaming;
        return copy;
      });
    }
    return out;
  }

  class Conversation {
    constructor() {
      this.messages = [];
      this.state = undefined;
      this.stateVersion = 0;
      this.subagents = new Map(); // subagentRunId -> {name, parent, status}
    }

    find(id) {
      return this.messages.find((message) => message.id === id);
    }

    findCall(callId) {
      for (const message of this.messages) {
        for (const call of message.toolCalls || []) {
          if (call.id === callId) return { message, call };
        }
      }
      return null;
    }

    // Applies one explicit event; returns warnings (what the client would warn about).
    apply(event) {
      const handler = this[`on_${event.type}`];
      const warnings = handler ? handler.call(this, event) || [] : [];
      if (isObject(event.metadata)) this.mergeMetadata(event);
      return warnings;
    }

    // Metadata merges per key, last write wins, into the entity the event builds.
    mergeMetadata(event) {
      let target = null;
      const type = event.type;
      if (type.startsWith('TOOL_CALL_') && type !== 'TOOL_CALL_RESULT') {
        const found = this.findCall(event.toolCallId);
        target = found && found.call;
      } else if (type.startsWith('TEXT_MESSAGE_') || type.startsWith('REASONING_MESSAGE_')
          || type.startsWith('ACTIVITY_') || type === 'TOOL_CALL_RESULT') {
        target = this.find(event.messageId);
      }
      if (!target) return;
      const merged = isObject(target.metadata) ? target.metadata : {};
      for (const [key, value] of Object.entries(event.metadata)) setMember(merged, key, clone(value));
      target.metadata = merged;
    }

    on_RUN_STARTED(event) {
      if (!isObject(event.input) || !Array.isArray(event.input.messages)) return [];
      for (const message of event.input.messages) {
        if (isObject(message) && typeof message.id === 'string' && !this.find(message.id)) {
          this.messages.push(clone(message));
        }
      }
      return [];
    }

    // A subagent's lifecycle changes no message; the page names and groups its messages by it.
    on_SUBAGENT_STARTED(event) {
      this.subagents.set(event.subagentRunId, {
        name: event.name, parent: event.parentSubagentRunId || null, status: 'running',
      });
      return [];
    }

    on_SUBAGENT_FINISHED(event) {
      const held = this.subagents.get(event.subagentRunId);
      if (held) held.status = isObject(event.outcome) && event.outcome.type === 'suspended' ? 'suspended' : 'finished';
      return [];
    }

    on_SUBAGENT_ERROR(event) {
      const held = this.subagents.get(event.subagentRunId);
      if (held) held.status = `failed: ${event.message}`;
      return [];
    }

    on_TEXT_MESSAGE_START(event) {
      const existing = this.find(event.messageId);
      if (existing && existing.role === 'activity') return [`message '${event.messageId}' is an activity; text dropped`];
      if (!existing) {
        const message = { id: event.messageId, role: event.role || 'assistant', content: '' };
        if (event.name !== undefined) message.name = event.name;
        if (event.subagentRunId !== undefined) message.subagentRunId = event.subagentRunId;
        this.messages.push(message);
      } else if (typeof existing.content !== 'string') {
        existing.content = '';
      }
      return [];
    }

    appendText(id, delta) {
      const message = this.find(id);
      if (!message || message.role === 'activity') return [`no message '${id}' to append text to`];
      message.content = (typeof message.content === 'string' ? message.content : '') + delta;
      message.streaming = true;
      return [];
    }

    endText(id) {
      const message = this.find(id);
      if (message) message.streaming = false;
      return [];
    }

    on_TEXT_MESSAGE_CONTENT(event) { return this.appendText(event.messageId, event.delta); }

    on_TEXT_MESSAGE_END(event) { return this.endText(event.messageId); }

    on_REASONING_MESSAGE_START(event) {
      if (!this.find(event.messageId)) {
        const message = { id: event.messageId, role: 'reasoning', content: '' };
        if (event.subagentRunId !== undefined) message.subagentRunId = event.subagentRunId;
        this.messages.push(message);
      }
      return [];
    }

    on_REASONING_MESSAGE_CONTENT(event) { return this.appendText(event.messageId, event.delta); }

    on_REASONING_MESSAGE_END(event) { return this.endText(event.messageId); }

    on_TOOL_CALL_START(event) {
      const found = this.findCall(event.toolCallId);
      if (found) {
        found.call.function.name = event.toolCallName;
        return [];
      }
      const warnings = [];
      let parent = event.parentMessageId ? this.find(event.parentMessageId) : undefined;
      if (parent && parent.role !== 'assistant') {
        warnings.push(`parent message '${parent.id}' is a ${parent.role} message; the call gets its own`);
        parent = undefined;
      }
      if (!parent) {
        const id = event.parentMessageId && !this.find(event.parentMessageId) ? event.parentMessageId : event.toolCallId;
        parent = { id, role: 'assistant', toolCalls: [] };
        if (event.subagentRunId !== undefined) parent.subagentRunId = event.subagentRunId;
        this.messages.push(parent);
      }
      parent.toolCalls = parent.toolCalls || [];
      parent.toolCalls.push({
        id: event.toolCallId, type: 'function', function: { name: event.toolCallName, arguments: '' }, streaming: true,
      });
      return warnings;
    }

    on_TOOL_CALL_ARGS(event) {
      const found = this.findCall(event.toolCallId);
      if (!found) return [`no tool call '${event.toolCallId}' to append arguments to`];
      found.call.function.arguments += event.delta;
      return [];
    }

    on_TOOL_CALL_END(event) {
      const found = this.findCall(event.toolCallId);
      if (found) found.call.streaming = false;
      return [];
    }

    on_TOOL_CALL_RESULT(event) {
      const message = { id: event.messageId, role: 'tool', toolCallId: event.toolCallId, content: clone(event.content) };
      if (event.subagentRunId !== undefined) message.subagentRunId = event.subagentRunId;
      const existing = this.find(event.messageId);
      if (existing) {
        Object.assign(existing, message);
        return [];
      }
      const owner = this.findCall(event.toolCallId);
      if (!owner) {
        this.messages.push(message);
        return [];
      }
      let at = this.messages.indexOf(owner.message) + 1;
      while (at < this.messages.length && this.messages[at].role === 'tool') at += 1;
      this.messages.splice(at, 0, message);
      return [];
    }

    on_STATE_SNAPSHOT(event) {
      this.state = clone(event.snapshot);
      this.stateVersion += 1;
      return [];
    }

    on_STATE_DELTA(event) {
      try {
        const { doc, dropped } = applyPatch(this.state === undefined ? {} : this.state, event.delta);
        this.state = doc;
        this.stateVersion += 1;
        return dropped;
      } catch (error) {
        if (!(error instanceof PatchError)) throw error;
        return [`the patch does not apply, the state is kept: ${error.message}`];
      }
    }

    on_MESSAGES_SNAPSHOT(event) {
      const incoming = event.messages.filter((m) => isObject(m) && typeof m.id === 'string');
      const byId = new Map(incoming.map((m) => [m.id, m]));
      const keepActivity = !incoming.some((m) => m.role === 'activity');
      const keepReasoning = !incoming.some((m) => m.role === 'reasoning');
      const kept = [];
      for (const message of this.messages) {
        if (byId.has(message.id)) {
          kept.push(clone(byId.get(message.id)));
          byId.delete(message.id);
        } else if ((message.role === 'activity' && keepActivity) || (message.role === 'reasoning' && keepReasoning)) {
          kept.push(message);
        }
      }
      for (const message of incoming) {
        if (byId.has(message.id)) kept.push(clone(message));
      }
      this.messages = kept;
      return [];
    }

    on_ACTIVITY_SNAPSHOT(event) {
      const existing = this.find(event.messageId);
      if (!existing) {
        this.messages.push({
          id: event.messageId, role: 'activity', activityType: event.activityType, content: clone(event.content),
        });
      } else if (event.replace !== false) {
        Object.assign(existing, { role: 'activity', activityType: event.activityType, content: clone(event.content) });
      }
      return [];
    }

    on_ACTIVITY_DELTA(event) {
      const existing = this.find(event.messageId);
      if (!existing) return [];
      if (existing.role !== 'activity') return [`message '${event.messageId}' is not an activity`];
      try {
        const { doc, dropped } = applyPatch(existing.content, event.patch);
        if (!isObject(doc)) return ["the activity patch would leave a content that is not an object; it is kept"];
        existing.content = doc;
        existing.activityType = event.activityType;
        return dropped;
      } catch (error) {
        if (!(error instanceof PatchError)) throw error;
        return [`Failed to apply activity patch for '${event.messageId}': ${error.message}`];
      }
    }

    on_REASONING_ENCRYPTED_VALUE(event) {
      if (event.subtype === 'tool-call') {
        const found = this.findCall(event.entityId);
        if (found) found.call.encryptedValue = event.encryptedValue;
      } else {
        const message = this.find(event.entityId);
        if (message && message.role !== 'activity') message.encryptedValue = event.encryptedValue;
      }
      return [];
    }

    // The messages the next request carries: all but activity messages, without view fields.
    wireMessages() {
      return this.messages.filter((m) => m.role !== 'activity').map((message) => {
        const out = {};
        for (const key of ['id', 'role', 'content', 'name', 'toolCallId', 'error', 'encryptedValue', 'subagentRunId', 'metadata']) {
          if (message[key] !== undefined) out[key] = message[key];
        }
        if (message.role === 'assistant' && message.toolCalls && message.toolCalls.length) {
          out.toolCalls = message.toolCalls.map((call) => {
            const copy = { id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } };
            if (call.encryptedValue !== undefined) copy.encryptedValue = call.encryptedValue;
            if (call.metadata !== undefined) copy.metadata = call.metadata;
            return copy;
          });
        }
        if (message.role === 'assistant' && out.content === '' && out.toolCalls) delete out.content;
        return out;
      });
    }
  }

  // -- the page ------------------------------------------------------------------------------------

  // Builds an element: el('p', {class: 'x', text: 'y', data-*: ...}, ...children).
  function el(tag, props = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'text') node.textContent = value;
      else if (key === 'class') node.className = value;
      else if (key === 'hidden') node.hidden = true;
      else node.setAttribute(key, value === true ? '' : String(value));
    }
    for (const item of children) {
      if (item !== null && item !== undefined && item !== false) {
        node.append(typeof item === 'string' ? document.createTextNode(item) : item);
      }
    }
    return node;
  }

  const $ = (id) => document.getElementById(id);

  function pretty(value) {
    return value === undefined ? '(none)' : JSON.stringify(value, null, 2);
  }

  function prettyArguments(text) {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      return text;
    }
  }

  // A content value as text: a string as it is; parts as text, never loaded (no requests).
  function contentText(content) {
    if (typeof content === 'string') return content;
    if (!Array.isArray(content)) return content === undefined ? '' : pretty(content);
    return content.map((part) => {
      if (!isObject(part)) return show(part);
      if (part.type === 'text') return String(part.text ?? '');
      const source = isObject(part.source) ? part.source : {};
      const where = source.type === 'data' ? `${String(source.value ?? '').length} base64 characters` : String(source.value ?? '');
      const mime = source.mimeType ? `, ${source.mimeType}` : '';
      return `[${part.type} part: ${source.type || '?'} ${where}${mime}]`;
    }).join('\n');
  }

  function nearBottom(node) {
    return node.scrollHeight - node.scrollTop - node.clientHeight < 40;
  }

  class Page {
    constructor() {
      this.endpoint = window.location.pathname + window.location.search;
      this.storageKey = `agui-inspector:${this.endpoint}`;
      this.record = null; // the durable run this page shows, once the server numbered a frame
      this.conversation = new Conversation();
      this.threadId = uuid();
      this.controller = null;
      this.requestCount = 0;
      this.pending = []; // the interrupts of the last RUN_FINISHED
      this.answers = new Map();
      this.nodes = new Map(); // message id -> its element
      this.callNodes = new Map(); // tool call id -> {root, args, status, result}
      this.subagentNodes = new Map(); // subagent id and group number -> its header
      this.scheduled = false;
      this.pendingLogs = new Set();
      this.dirty = { messages: false, state: null, record: false };
    }

    start() {
      $('endpoint').textContent = this.endpoint;
      $('thread-id').textContent = this.threadId;
      $('composer').addEventListener('submit', (event) => {
        event.preventDefault();
        this.send();
      });
      $('message').addEventListener('keydown', (event) => {
        if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
          event.preventDefault();
          this.send();
        }
      });
      $('stop').addEventListener('click', () => this.stop());
      $('new-thread').addEventListener('click', () => this.newThread());
      $('interrupt-form').addEventListener('submit', (event) => event.preventDefault());
      this.renderState(null);
      this.setIdle(true);
      const saved = this.recall();
      if (saved) this.reattach(saved);
    }

    // -- requests --------------------------------------------------------------------------

    offeredTools() {
      const text = $('tools').value.trim();
      const hint = $('tools-error');
      hint.textContent = '';
      if (!text) return [];
      let value;
      try {
        value = JSON.parse(text);
      } catch (error) {
        hint.textContent = `Not JSON: ${error.message}`;
        return null;
      }
      if (!Array.isArray(value)) {
        hint.textContent = 'Offer tools as a JSON list.';
        return null;
      }
      const tools = [];
      for (const item of value) {
        if (typeof item === 'string') {
          tools.push({ name: item, description: item, parameters: { type: 'object', properties: {} } });
        } else if (isObject(item) && typeof item.name === 'string') {
          tools.push({ description: item.name, ...item });
        } else {
          hint.textContent = `Each tool is a name or an object with a "name": ${show(item)} is neither.`;
          return null;
        }
      }
      return tools;
    }

    send() {
      if (this.controller) return;
      const box = $('message');
      const text = box.value.trim();
      if (!text) {
        box.focus();
        return;
      }
      const tools = this.offeredTools();
      if (tools === null) {
        $('settings').open = true;
        $('tools').focus();
        return;
      }
      this.conversation.messages.push({ id: uuid(), role: 'user', content: text });
      box.value = '';
      this.renderMessages();
      this.run({ tools });
    }

    answer(interrupt, choice, payloadField, status) {
      if (this.controller) return;
      let payload;
      const text = payloadField.value.trim();
      if (text) {
        try {
          payload = JSON.parse(text);
        } catch (error) {
          status.textContent = `The payload is not JSON: ${error.message}`;
          payloadField.focus();
          return;
        }
      }
      const entry = { interruptId: interrupt.id, status: choice === 'cancel' ? 'cancelled' : 'resolved' };
      if (choice !== 'cancel') {
        const approved = choice === 'approve';
        if (payload === undefined) entry.payload = { approved };
        else if (isObject(payload)) entry.payload = { ...payload, approved };
        else entry.payload = payload;
      } else if (payload !== undefined) {
        entry.payload = payload;
      }
      this.answers.set(interrupt.id, entry);
      status.textContent = `Answered: ${choice === 'approve' ? 'approved' : choice === 'decline' ? 'declined' : 'cancelled'}.`;
      const open = this.pending.filter((i) => !this.answers.has(i.id));
      if (open.length) return;
      const tools = this.offeredTools();
      if (tools === null) return;
      const resume = this.pending.map((i) => this.answers.get(i.id));
      this.run({ tools, resume });
    }

    // A durable run (its frames are numbered) outlives the connection, so leaving would not stop
    // it: Stop asks the server to cancel it and reads the stream on to its RUN_FINISHED.
    stop() {
      const durable = this.record && this.record.lastEventId !== null;
      if (durable) this.cancelDurable(this.record.runId);
      else if (this.controller) this.controller.abort();
    }

    // `headers` with the Authorization the page's field holds, if it holds one.
    authorized(headers) {
      const auth = $('auth').value.trim();
      if (auth) headers.Authorization = auth;
      return headers;
    }

    async cancelDurable(runId) {
      const base = window.location.pathname.replace(/\/+$/, '');
      const headers = this.authorized({});
      let answered = false;
      try {
        const response = await fetch(`${base}/runs/${encodeURIComponent(runId)}/cancel`, { method: 'POST', headers, cache: 'no-store' });
        answered = response.ok || response.status === 409; // 409: it had ended already
      } catch {
        // the server cannot be asked: leaving is all that is left
      }
      if (!answered && this.controller) this.controller.abort();
    }

    newThread() {
      if (this.controller) this.controller.abort();
      this.conversation = new Conversation();
      this.threadId = uuid();
      $('thread-id').textContent = this.threadId;
      this.record = null;
      this.forget();
      $('reattached').hidden = true;
      this.nodes.clear();
      this.callNodes.clear();
      $('conversation').replaceChildren(el('p', { class: 'empty', text: 'A new thread: no messages yet.' }));
      this.setInterrupts([]);
      this.renderState(null);
      this.setOutcome('none', 'No run yet on this thread.');
      $('message').focus();
    }

    async run({ tools, resume }) {
      const runId = uuid();
      const body = {
        threadId: this.threadId,
        runId,
        state: this.conversation.state,
        messages: this.conversation.wireMessages(),
        tools,
        context: [],
        forwardedProps: {},
        protocolVersion: '1.0', // the page reads 1.0 streams: subagents and all
      };
      if (this.conversation.state === undefined) delete body.state;
      if (resume) body.resume = resume;
      const knownCalls = [];
      body.messages.forEach((m) => (m.toolCalls || []).forEach((call) => knownCalls.push(call.id)));
      // Kept only if the server numbers its frames (see remember): what a reload starts from.
      const record = {
        runId,
        threadId: this.threadId,
        messages: this.conversation.messages.map(plainMessage),
        state: this.conversation.state,
        lastEventId: null,
      };
      this.forget();
      $('reattached').hidden = true;
      const init = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
      await this.follow(this.endpoint, init, { runId, knownCalls, record, label: `POST run ${runId}${resume ? ' (resume)' : ''}` });
    }

    // Sends one request and reads its answer as the event stream of run `runId`.
    async follow(url, init, { runId, knownCalls, record, label }) {
      const checker = new Checker(knownCalls);
      const log = this.newLogSection(runId, label);
      this.setInterrupts([]);
      this.controller = new AbortController();
      this.record = record;
      this.setIdle(false);
      this.setOutcome('running', `Running: run ${runId}…`);
      this.runOutcome = null;
      const headers = this.authorized({ ...init.headers, Accept: 'text/event-stream' });
      let frames = 0;
      try {
        const response = await fetch(url, { ...init, headers, signal: this.controller.signal, cache: 'no-store' });
        if (!response.ok) {
          this.record = null; // nothing to pick up: a refused run, or one gone from the log
          this.forget();
          await this.httpError(response);
          return;
        }
        const type = response.headers.get('content-type') || '';
        if (!type.toLowerCase().startsWith('text/event-stream')) {
          this.logNote(log, 'warning', `the response is ${type || 'untyped'}, not text/event-stream; read as SSE anyway`);
        }
        if (!response.body) throw new Error('the response has no body to read');
        log.streamed = true;
        const parser = new SSEParser((data, id) => {
          this.handleFrame(checker, log, frames, data);
          this.numbered(id);
          frames += 1;
        });
        const reader = response.body.getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.push(value);
        }
        const rest = parser.end();
        if (rest) this.logNote(log, 'warning', `the stream ended inside a frame; ${rest.length} characters were discarded`);
        checker.finish().forEach((mark) => this.logMark(log, null, 'end of stream', mark));
        this.finishRun(checker);
      } catch (error) {
        if (error && error.name === 'AbortError') {
          this.setOutcome('aborted', 'Stopped: you aborted the request, and the server sees a disconnect (an official client reports this as RUN_ERROR with code "abort").');
        } else {
          this.setOutcome('network-error', `Network error: ${error && error.message ? error.message : error}`);
        }
      } finally {
        this.flush();
        this.summarize(log, checker);
        $('outcome').dataset.violations = String(checker.violations);
        this.controller = null;
        this.markStreamingDone();
        this.setIdle(true);
      }
    }

    // -- a durable run, picked back up after a reload ---------------------------------------
    //
    // An endpoint with a run log numbers its frames (`id:` lines) and serves each run again at
    // <path>/runs/<run id>/events, from its start and then live to its end. So the page keeps
    // the run it shows in sessionStorage (this tab only) from the first numbered frame on, and
    // a reload reads that run again instead of losing it. An endpoint without a log numbers
    // nothing: no record is kept and a reload starts afresh, as it always did. The record holds
    // the conversation before the run (the stream brings the rest) and never the Authorization
    // header.

    numbered(id) {
      if (id === null || !this.record) return;
      this.record.lastEventId = id;
      this.dirty.record = true; // written at the next flush, not once per frame
    }

    remember(record) {
      try {
        sessionStorage.setItem(this.storageKey, JSON.stringify(record));
      } catch {
        // storage full or refused: the run goes on, only a reload cannot pick it up
      }
    }

    forget() {
      try {
        sessionStorage.removeItem(this.storageKey);
      } catch {
        // storage refused: there is nothing to forget
      }
    }

    recall() {
      let record;
      try {
        record = JSON.parse(sessionStorage.getItem(this.storageKey) || 'null');
      } catch {
        return null;
      }
      const valid = isObject(record) && typeof record.runId === 'string' && record.runId
        && typeof record.threadId === 'string' && Array.isArray(record.messages)
        && record.messages.every(isObject);
      if (!valid) this.forget();
      return valid ? record : null;
    }

    // Shows the conversation as it was before the run, then reads the whole run again.
    async reattach(record) {
      this.threadId = record.threadId;
      $('thread-id').textContent = this.threadId;
      this.conversation.messages = record.messages;
      this.conversation.state = hasOwn(record, 'state') ? record.state : undefined;
      this.renderMessages();
      this.renderState(null);
      const seen = record.lastEventId === null ? 'before its first event' : `through event ${record.lastEventId}`;
      const notice = $('reattached');
      notice.textContent = `Reattached after a reload: run ${record.runId} (this page had read it ${seen}) is read again from its start, then followed live to its end.`;
      notice.hidden = false;
      const knownCalls = [];
      record.messages.forEach((m) => (Array.isArray(m.toolCalls) ? m.toolCalls : []).forEach((call) => knownCalls.push(call.id)));
      const base = window.location.pathname.replace(/\/+$/, '');
      const url = `${base}/runs/${encodeURIComponent(record.runId)}/events`;
      await this.follow(url, { method: 'GET', headers: {} }, { runId: record.runId, knownCalls, record, label: `GET run ${record.runId} (reattached after a reload)` });
    }

    async httpError(response) {
      const text = await response.text();
      let detail = text;
      try {
        const body = JSON.parse(text);
        if (isObject(body) && body.code) detail = `${body.code}: ${body.message ?? ''}`;
      } catch {
        // not JSON: show the text as it is
      }
      this.setOutcome('http-error', `HTTP ${response.status}${detail ? ` ${detail}` : ''}`);
    }

    handleFrame(checker, log, index, data) {
      const result = checker.frame(data);
      const item = this.logEvent(log, index, result);
      const warnings = [];
      for (const event of result.events) {
        for (const warning of this.conversation.apply(event)) warnings.push(warning);
        this.track(event, index, log.request);
      }
      warnings.forEach((message) => this.logMark(log, item, null, { kind: 'warning', message }));
      if (result.events.length) this.dirty.messages = true;
      this.schedule();
    }

    // Run outcome and state bookkeeping for one explicit event.
    track(event, index, request) {
      switch (event.type) {
        case 'RUN_STARTED':
          this.setOutcome('running', `Running: run ${event.runId}…`);
          this.runOutcome = null;
          break;
        case 'RUN_FINISHED':
          this.runOutcome = { type: 'finished', event };
          break;
        case 'RUN_ERROR':
          this.runOutcome = { type: 'error', event };
          break;
        case 'STATE_SNAPSHOT':
        case 'STATE_DELTA':
          this.dirty.state = `after event #${index} (${event.type}) of request ${request}`;
          break;
        default:
      }
    }

    finishRun(checker) {
      const outcome = this.runOutcome;
      const n = checker.violations;
      const problems = n
        ? ` But the stream has ${n} protocol problem${n === 1 ? '' : 's'} (see the event log): an official client would fail this run.`
        : '';
      if (!outcome) {
        this.setOutcome('truncated', `Ended without a terminal event: the stream closed before RUN_FINISHED or RUN_ERROR.${problems}`);
        return;
      }
      if (outcome.type === 'error') {
        const e = outcome.event;
        this.setOutcome('error', `Error${e.code ? ` ${e.code}` : ''}: ${String(e.message).replace(/\.$/, '')}.${problems}`);
        return;
      }
      const result = isObject(outcome.event.outcome) ? outcome.event.outcome : { type: 'success' };
      if (result.type === 'interrupt' && Array.isArray(result.interrupts)) {
        const count = result.interrupts.length;
        this.setOutcome('interrupt', `Interrupted: the agent is waiting for your answer to ${count} question${count === 1 ? '' : 's'} (below).${problems}`);
        this.setInterrupts(result.interrupts);
      } else if (result.type === 'cancelled') {
        this.setOutcome('cancelled', `Cancelled: the run stopped on purpose.${problems}`);
      } else {
        const pending = Array.isArray(result.pendingToolCallIds) && result.pendingToolCallIds.length
          ? ` Tool calls left to the client: ${result.pendingToolCallIds.join(', ')}.` : '';
        this.setOutcome('success', `Finished: success.${pending}${problems}`);
      }
    }

    // -- rendering ------------------------------------------------------------------------

    setIdle(idle) {
      $('send').disabled = !idle;
      $('stop').disabled = idle;
      $('conversation').setAttribute('aria-busy', idle ? 'false' : 'true');
    }

    setOutcome(kind, text) {
      const node = $('outcome');
      node.dataset.outcome = kind;
      delete node.dataset.violations;
      node.textContent = text;
    }

    renderState(note) {
      const state = this.conversation.state;
      $('state').textContent = state === undefined ? '(no state yet)' : pretty(state);
      $('state-note').textContent = note ? `State ${note}.` : 'The state the next request sends.';
    }

    markStreamingDone() {
      for (const message of this.conversation.messages) {
        message.streaming = false;
        (message.toolCalls || []).forEach((call) => { call.streaming = false; });
      }
      this.renderMessages();
    }

    renderMessages() {
      const box = $('conversation');
      const follow = nearBottom(box);
      const results = new Map();
      for (const message of this.conversation.messages) {
        if (message.role === 'tool') results.set(message.toolCallId, message);
      }
      const wanted = [];
      const runs = new Map(); // how many groups of each subagent so far, for their headers' keys
      let group = null;
      for (const message of this.conversation.messages) {
        if (message.role === 'tool' && this.conversation.findCall(message.toolCallId)) continue;
        const owner = message.subagentRunId || null;
        if (owner !== null && owner !== group) {
          runs.set(owner, (runs.get(owner) || 0) + 1);
          wanted.push(this.renderSubagent(owner, runs.get(owner)));
        }
        group = owner;
        const node = this.renderMessage(message, results);
        node.classList.toggle('in-subagent', owner !== null);
        if (owner !== null) node.dataset.subagentRunId = owner;
        wanted.push(node);
      }
      const empty = box.querySelector('.empty');
      if (empty && wanted.length) empty.remove();
      wanted.forEach((node, i) => {
        const current = box.children[i + (box.querySelector('.empty') ? 1 : 0)];
        if (current !== node) box.insertBefore(node, current || null);
      });
      const keep = new Set(wanted);
      for (const node of [...box.children]) {
        if (!keep.has(node) && !node.classList.contains('empty')) {
          node.remove();
          this.nodes.forEach((value, key) => { if (value.root === node) this.nodes.delete(key); });
          this.subagentNodes.forEach((value, key) => { if (value === node) this.subagentNodes.delete(key); });
        }
      }
      if (follow) box.scrollTop = box.scrollHeight;
    }

    // The header of a run of messages of one subagent: who it is, under whom, how it is doing.
    renderSubagent(owner, nth) {
      const key = `${owner}#${nth}`;
      let node = this.subagentNodes.get(key);
      if (!node) {
        node = el('h3', { class: 'subagent-head', 'data-subagent-run-id': owner });
        this.subagentNodes.set(key, node);
      }
      const known = this.conversation.subagents.get(owner);
      const name = known ? known.name : 'subagent';
      const under = known && known.parent ? `, under ${known.parent}` : '';
      const status = known ? known.status : 'not announced';
      const text = `Subagent ${name} (${owner}${under}): ${status}`;
      if (node.textContent !== text) node.textContent = text;
      node.dataset.status = status.split(':')[0];
      return node;
    }

    renderMessage(message, results) {
      let entry = this.nodes.get(message.id);
      if (!entry || entry.role !== message.role) {
        entry = this.createMessage(message);
        this.nodes.set(message.id, entry);
      }
      // Strings are compared by reference first, so an unchanged message costs next to nothing.
      const source = message.content;
      if (source !== entry.source || message.role === 'activity') {
        entry.source = source;
        const content = message.role === 'activity' ? pretty(source) : contentText(source);
        if (entry.text.textContent !== content) entry.text.textContent = content;
        entry.text.hidden = !content;
      }
      const streaming = Boolean(message.streaming);
      entry.root.classList.toggle('streaming', streaming);
      if (entry.summary) entry.summary.textContent = `${entry.label}${streaming ? ' (streaming…)' : ''}`;
      if (entry.calls) this.renderCalls(entry, message, results);
      return entry.root;
    }

    createMessage(message) {
      const role = message.role;
      const label = {
        user: 'You', assistant: 'Assistant', tool: 'Tool result', reasoning: 'Reasoning', activity: 'Activity',
        system: 'System', developer: 'Developer',
      }[role] || role;
      const who = message.name ? `${label} (${message.name})` : label;
      const sub = message.subagentRunId ? ` · subagent ${message.subagentRunId}` : '';
      const root = el('article', { class: `message role-${role}`, 'data-role': role, 'data-message-id': message.id });
      const text = el(role === 'activity' ? 'pre' : 'p', { class: 'content' });
      if (role === 'reasoning') {
        const summary = el('summary', { text: `${who}${sub}` });
        root.append(el('details', {}, summary, text));
        return { root, text, role, summary, label: `${who}${sub}`, source: undefined };
      }
      let heading = `${who}${sub}`;
      if (role === 'activity') heading = `${who}: ${message.activityType}${sub}`;
      if (role === 'tool') heading = `${who} for ${message.toolCallId}`;
      root.append(el('h3', { class: 'who', text: heading }), text);
      const entry = { root, text, role, source: undefined };
      if (role === 'assistant') {
        entry.calls = el('div', { class: 'tool-calls' });
        root.append(entry.calls);
      }
      return entry;
    }

    renderCalls(entry, message, results) {
      const wanted = (message.toolCalls || []).map((call) => this.renderCall(call, results.get(call.id)));
      wanted.forEach((node, i) => {
        if (entry.calls.children[i] !== node) entry.calls.insertBefore(node, entry.calls.children[i] || null);
      });
      while (entry.calls.children.length > wanted.length) entry.calls.lastChild.remove();
    }

    renderCall(call, result) {
      let node = this.callNodes.get(call.id);
      if (!node) {
        const title = el('h4', { class: 'call-name' });
        const status = el('span', { class: 'call-status' });
        const args = el('pre', { class: 'call-args', tabindex: '0' });
        const resultText = el('pre', { class: 'call-result', tabindex: '0' });
        const resultBox = el('div', { class: 'call-result-box', hidden: true }, el('p', { class: 'label', text: 'Result' }), resultText);
        const root = el('section', { class: 'tool-call', 'data-tool-call-id': call.id },
          title, status, el('p', { class: 'label', text: 'Arguments' }), args, resultBox);
        node = { root, title, status, args, resultBox, resultText };
        this.callNodes.set(call.id, node);
      }
      node.title.textContent = `Tool call: ${call.function.name}`;
      const args = call.streaming ? call.function.arguments : prettyArguments(call.function.arguments);
      if (node.args.textContent !== args) node.args.textContent = args || '(no arguments yet)';
      let status = call.streaming ? 'arguments streaming…' : 'arguments complete';
      if (!call.streaming) status += result ? ', result received' : ', no result yet';
      node.status.textContent = `(${status})`;
      node.root.dataset.state = call.streaming ? 'streaming' : result ? 'done' : 'waiting';
      if (result) {
        node.resultBox.hidden = false;
        const text = prettyArguments(contentText(result.content));
        if (node.resultText.textContent !== text) node.resultText.textContent = text;
      } else {
        node.resultBox.hidden = true;
      }
      return node.root;
    }

    setInterrupts(interrupts) {
      this.pending = interrupts;
      this.answers = new Map();
      const form = $('interrupt-form');
      const list = $('interrupts');
      list.replaceChildren();
      form.hidden = !interrupts.length;
      interrupts.forEach((interrupt, n) => {
        const payloadId = `interrupt-payload-${n}`;
        const payload = el('textarea', { id: payloadId, rows: '2', spellcheck: 'false', 'aria-describedby': `${payloadId}-hint` });
        const status = el('p', { class: 'answer', role: 'status' });
        const button = (choice, text) => {
          const b = el('button', { type: 'button', 'data-choice': choice, text });
          b.addEventListener('click', () => this.answer(interrupt, choice, payload, status));
          return b;
        };
        const facts = el('dl', { class: 'facts' }, el('dt', { text: 'Reason' }), el('dd', { text: String(interrupt.reason) }));
        if (interrupt.toolCallId) {
          const found = this.conversation.findCall(interrupt.toolCallId);
          const name = found ? `${found.call.function.name} (${interrupt.toolCallId})` : interrupt.toolCallId;
          facts.append(el('dt', { text: 'Tool call' }), el('dd', { text: name }));
          if (found) facts.append(el('dt', { text: 'Arguments' }), el('dd', {}, el('code', { text: found.call.function.arguments })));
        }
        if (interrupt.expiresAt) facts.append(el('dt', { text: 'Expires' }), el('dd', { text: interrupt.expiresAt }));
        const fieldset = el('fieldset', { class: 'interrupt', 'data-interrupt-id': interrupt.id },
          el('legend', { text: `Interrupt ${interrupt.id}` }),
          interrupt.message ? el('p', { class: 'interrupt-message', text: interrupt.message }) : null,
          facts,
          interrupt.responseSchema ? el('details', {}, el('summary', { text: 'Response schema' }), el('pre', { text: pretty(interrupt.responseSchema) })) : null,
          el('label', { for: payloadId, text: 'Payload (optional JSON)' }),
          payload,
          el('p', { class: 'hint', id: `${payloadId}-hint`, text: 'Approve and Decline send {"approved": true|false}, merged into an object payload; Cancel answers with status "cancelled".' }),
          el('div', { class: 'buttons' }, button('approve', 'Approve'), button('decline', 'Decline'), button('cancel', 'Cancel')),
          status);
        list.append(fieldset);
      });
    }

    // -- the event log --------------------------------------------------------------------

    newLogSection(runId, label) {
      this.requestCount += 1;
      const heading = el('h3', { text: `Request ${this.requestCount}: ${label}` });
      const summary = el('p', { class: 'log-summary', role: 'status', text: 'Streaming…' });
      const list = el('ol', { class: 'events', start: '0' });
      const section = el('section', { class: 'request', 'data-run-id': runId }, heading, summary, list);
      const box = $('log');
      box.append(section);
      const older = box.querySelectorAll('section.request');
      if (older.length > 20) older[0].remove();
      box.scrollTop = section.offsetTop - box.offsetTop; // a new request: show its start
      return { section, list, summary, request: this.requestCount };
    }

    logEvent(log, index, result) {
      const event = result.event;
      const type = isObject(event) && typeof event.type === 'string' ? event.type : '(not an event)';
      const line = el('summary', {},
        el('span', { class: 'index', text: `#${index}` }), ' ',
        el('span', { class: 'type', text: type }));
      const summary = isObject(event) ? summarize(event) : '';
      if (summary) line.append(' ', el('span', { class: 'summary', text: summary }));
      const raw = event === null || event === undefined ? '(the frame could not be read)' : pretty(event);
      const item = el('li', { 'data-index': String(index), 'data-type': type },
        el('details', { class: 'raw' }, line, el('pre', { text: raw })));
      this.appendToLog(log, item);
      result.marks.forEach((mark) => this.logMark(log, item, null, mark));
      return item;
    }

    logMark(log, item, label, mark) {
      let target = item;
      if (!target) {
        target = el('li', { class: 'stream-end', 'data-type': label || 'note' }, el('span', { class: 'type', text: label || 'note' }));
        this.appendToLog(log, target);
      }
      const text = {
        violation: `⚠ violation: ${mark.rule}`,
        malformed: '⚠ malformed event',
        warning: '⚠ warning',
        note: 'ℹ note',
      }[mark.kind];
      if (mark.kind === 'violation') target.dataset.rule = mark.rule;
      if (mark.kind === 'violation' || mark.kind === 'malformed') target.classList.add('broken');
      target.append(el('p', { class: `mark mark-${mark.kind}` }, el('strong', { text }), ` — ${mark.message}`));
    }

    logNote(log, kind, message) {
      this.logMark(log, null, 'response', { kind, message });
    }

    // Log items wait in a fragment until the next flush, like every other change to the page.
    appendToLog(log, item) {
      if (!log.pending) log.pending = document.createDocumentFragment();
      log.pending.append(item);
      this.pendingLogs.add(log);
      this.schedule();
    }

    // Many events may arrive in one read: the page is updated at most once per frame (reading
    // the layout to decide about scrolling costs a reflow, which must not happen per event).
    schedule() {
      if (this.scheduled) return;
      this.scheduled = true;
      const run = () => {
        if (this.scheduled) this.flush();
      };
      requestAnimationFrame(run);
      setTimeout(run, 100); // a hidden tab gets no animation frames
    }

    flush() {
      this.scheduled = false;
      if (this.pendingLogs.size) {
        const box = $('log');
        const follow = nearBottom(box);
        for (const log of this.pendingLogs) {
          log.list.append(log.pending);
          log.pending = null;
        }
        this.pendingLogs.clear();
        if (follow) box.scrollTop = box.scrollHeight;
      }
      if (this.dirty.messages) {
        this.dirty.messages = false;
        this.renderMessages();
      }
      if (this.dirty.state) {
        const note = this.dirty.state;
        this.dirty.state = null;
        this.renderState(note);
      }
      if (this.dirty.record) {
        this.dirty.record = false;
        if (this.record) this.remember(this.record);
      }
    }

    summarize(log, checker) {
      const n = checker.violations;
      if (!log.streamed) {
        log.summary.textContent = 'No event stream was read: see the run outcome.';
        return;
      }
      log.summary.textContent = n
        ? `${n} protocol problem${n === 1 ? '' : 's'} in this stream (marked ⚠ below).`
        : 'No protocol violations in this stream.';
      log.section.dataset.violations = String(n);
    }
  }

  // A one-line summary of an event for the log: its ids and a short view of its payload.
  function summarize(event) {
    const parts = [];
    for (const key of ['runId', 'messageId', 'toolCallId', 'toolCallName', 'stepName', 'subagentRunId', 'role', 'name']) {
      const value = event[key];
      if (typeof value === 'string') parts.push(`${key}=${value.length > 28 ? `…${value.slice(-20)}` : value}`);
    }
    if (typeof event.delta === 'string') parts.push(JSON.stringify(event.delta.length > 60 ? `${event.delta.slice(0, 57)}...` : event.delta));
    if (Array.isArray(event.delta)) parts.push(`${event.delta.length} patch op${event.delta.length === 1 ? '' : 's'}`);
    if (isObject(event.outcome) && typeof event.outcome.type === 'string') parts.push(`outcome=${event.outcome.type}`);
    if (typeof event.message === 'string' && event.type === 'RUN_ERROR') parts.push(JSON.stringify(event.message));
    if (typeof event.code === 'string') parts.push(`code=${event.code}`);
    return parts.join(' ');
  }

  const page = new Page();
  // For tests and the browser console: the pieces, and the page.
  window.aguiInspector = Object.freeze({
    RULE, SSEParser, PatchError, applyPatch, jsonEqual, Checker, checkStream, foldStream, Conversation, page,
  });
  page.start();
}());
