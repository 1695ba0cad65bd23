-- bsv-utxo-store UDF module (docs/udf.md; the function list and argument orders are lib/domain/udf.ts).
--
-- Runs in Aerospike >= 7 (Lua 5.4) and in the project's embedded engine. It uses only the documented UDF API:
-- aerospike:exists / aerospike:update, record bins as rec[name], bytes(n) with 1-based b[i], bytes.size, get_string,
-- get_bytes, set_bytes and set_string,
-- list() / list.size / list.append, map() / map.size / map.remove, and the Lua base, string, table and math
-- libraries. Everything but the exported functions is local; the module never raises a Lua error: every path
-- returns a map { status = "OK" | "ERROR", errorCode?, message?, signal?, blockIDs?, errors?, childCount? }; spendMulti
-- also returns `unchanged` (positions of the items already spent by the same spender: their slots are left as they are,
-- but the record is written all the same, so the answer rests on every copy).
--
-- Slots in `utxos`: nil (output not stored), 32 bytes (unspent: the UTXO hash), 68 bytes (UTXO hash || 36 bytes of
-- spending data: spending txid in internal order || uint32 LE input index). Spending data of 36 x 0xFF marks a
-- frozen output. Offsets are 0-based (list index = offset + 1).
--
-- Choices beyond Teranode's module (docs/udf.md lists where this module differs):
-- - arguments are checked before the record is read (a wrong type is INVALID_PARAMETER even for a missing record);
--   booleans may also be given as the integers 0 / 1 (clients that encode booleans as integers);
-- - a record with `reassignments` never counts as fully spent (the counters are left exact);
-- - the DAH rule's order is: R = 0, preserveUntil, conflicting (any record, as the store creates conflicting
--   pagination records with a DAH), pagination record (spent-state signals only), master;
-- - setMined on the longest chain stamps the DAH from max(currentBlockHeight, blockHeight); a block added only on a
--   fork to a tx that was in no block marks it unmined; an already set unminedSince is kept when the last block is
--   removed;
-- - PRESERVE is signalled for external records only (only they have pagination records and blobs to follow up).

local HASH_SIZE = 32
local SPENDING_DATA_SIZE = 36
local SPENT_SIZE = HASH_SIZE + SPENDING_DATA_SIZE
local FROZEN_BYTE = 255

local OK = "OK"
local ERROR = "ERROR"

local ALLSPENT = "ALLSPENT"
local NOTALLSPENT = "NOTALLSPENT"
local DAHSET = "DAHSET"
local DAHUNSET = "DAHUNSET"
local PRESERVE = "PRESERVE"

-- bins (docs/records.md)
local B_CONFLICTING = "conflicting"
local B_LOCKED = "locked"
local B_CREATING = "creating"
local B_DELETING = "deleting"
local B_SPENDING_HEIGHT = "spendingHeight"
local B_UTXOS = "utxos"
local B_RECORD_UTXOS = "recordUtxos"
local B_SPENT_UTXOS = "spentUtxos"
local B_DAH = "deleteAtHeight"
local B_SPENDABLE_IN = "utxoSpendableIn"
local B_REASSIGNMENTS = "reassignments"
local B_DELETED_CHILDREN = "deletedChildren"
local B_LAST_SPENT_STATE = "lastSpentState"
local B_TOTAL_EXTRA_RECS = "totalExtraRecs"
local B_SPENT_EXTRA_RECS = "spentExtraRecs"
local B_BLOCK_IDS = "blockIDs"
local B_BLOCK_HEIGHTS = "blockHeights"
local B_SUBTREE_IDXS = "subtreeIdxs"
local B_UNMINED_SINCE = "unminedSince"
local B_EXTERNAL = "external"
local B_PRESERVE_UNTIL = "preserveUntil"
local B_TOMBSTONE = "tombstone"
local B_CONFLICTING_CS = "conflictingCs"

-- library functions captured once (no global lookups at call time)
local pcall = pcall
local type = type
local tostring = tostring
local math_type = math.type
local math_tointeger = math.tointeger
local string_format = string.format
local string_lower = string.lower
local string_find = string.find
local table_concat = table.concat

local HEX = {}
for i = 0, 255 do
    HEX[i] = string_format("%02x", i)
end

---------------------------------------------------------------------------------------------------------------------
-- value helpers
---------------------------------------------------------------------------------------------------------------------

-- A deleted record is replaced by a tombstone (a record with only the `tombstone` bin, see the engines' remove):
-- Community Edition keeps no tombstone of its own, so a plain delete returns after a restart. Every function treats
-- a tombstone exactly like a missing record and never writes to it.
local function isLive(rec)
    return aerospike:exists(rec) and rec[B_TOMBSTONE] == nil
end

-- An integer argument or bin value (an integral float is accepted and converted), else nil.
local function toInt(v)
    local t = math_type(v)
    if t == "integer" then
        return v
    elseif t == "float" then
        return math_tointeger(v)
    end
    return nil
end

-- A boolean argument: true/false, or the integers 1/0 (clients that send booleans as integers), else nil.
local function toBool(v)
    if v == true or v == false then
        return v
    end
    local n = toInt(v)
    if n == 1 then
        return true
    elseif n == 0 then
        return false
    end
    return nil
end

-- A flag bin: set when true or a non-zero integer.
local function flag(v)
    if v == true then
        return true
    end
    local n = toInt(v)
    return n ~= nil and n ~= 0
end

local function sizeOf(fn, v)
    local t = type(v)
    if t ~= "userdata" and t ~= "table" then
        return nil
    end
    local ok, n = pcall(fn, v)
    if ok then
        return toInt(n)
    end
    return nil
end

-- Size of a bytes value, or nil when v is not bytes.
local function bytesSize(v)
    return sizeOf(bytes.size, v)
end

-- Size of a list value, or nil when v is not a list.
local function listSize(v)
    return sizeOf(list.size, v)
end

-- Size of a map value, or nil when v is not a map.
local function mapSize(v)
    return sizeOf(map.size, v)
end

local function isBytesOfSize(v, n)
    return bytesSize(v) == n
end

-- Byte ranges are compared, copied and tested whole (bytes.get_string / set_bytes), not byte by byte: each b[i] is a
-- call into the server's C API, and a spend touched about 200 of them per input. Every caller has checked the sizes
-- first (the server's get_string and set_bytes do not check bounds).
local function bytesEqual(a, aFrom, b, bFrom, n)
    return bytes.get_string(a, aFrom, n) == bytes.get_string(b, bFrom, n)
end

local FROZEN_MARKER = string.rep(string.char(FROZEN_BYTE), SPENDING_DATA_SIZE)

local function isFrozenMarker(data, from)
    return bytes.get_string(data, from, SPENDING_DATA_SIZE) == FROZEN_MARKER
end

-- New slot: the 32 bytes of `hash` (from index 1), followed by 36 bytes of `data` when given.
local function newSlot(hash, data)
    local n = HASH_SIZE
    if data ~= nil then
        n = SPENT_SIZE
    end
    local b = bytes(n)
    bytes.set_bytes(b, 1, hash, HASH_SIZE)
    if data ~= nil then
        bytes.set_bytes(b, HASH_SIZE + 1, data, SPENDING_DATA_SIZE)
    end
    return b
end

local function frozenSlot(hash)
    local b = bytes(SPENT_SIZE)
    bytes.set_bytes(b, 1, hash, HASH_SIZE)
    bytes.set_string(b, HASH_SIZE + 1, FROZEN_MARKER)
    return b
end

-- The spending data held by a 68-byte slot, as 36 bytes.
local function spendingDataOf(slot)
    return bytes.get_bytes(slot, HASH_SIZE + 1, SPENDING_DATA_SIZE)
end

-- Display hex (reversed, lowercase) of the spending txid held by a 68-byte slot.
local function spenderTxidHex(slot)
    local t = {}
    for i = HASH_SIZE + HASH_SIZE, HASH_SIZE + 1, -1 do
        t[#t + 1] = HEX[slot[i]]
    end
    return table_concat(t)
end

-- Text form of a 68-byte slot's spending data: display-hex txid || the 4 index bytes as stored.
local function spenderText(slot)
    local t = { spenderTxidHex(slot) }
    for i = SPENT_SIZE - 3, SPENT_SIZE do
        t[#t + 1] = HEX[slot[i]]
    end
    return table_concat(t)
end

-- Map lookup by an integer key, tolerant of maps whose integer keys were written as decimal strings.
local function mapGetInt(m, key)
    local v = m[key]
    if v == nil then
        v = m[tostring(key)]
    end
    return v
end

local function copyList(l)
    local out = list()
    local n = listSize(l) or 0
    for i = 1, n do
        list.append(out, l[i])
    end
    return out
end

---------------------------------------------------------------------------------------------------------------------
-- responses
---------------------------------------------------------------------------------------------------------------------

local function okResponse()
    local r = map()
    r["status"] = OK
    return r
end

local function errorResponse(code, message)
    local r = map()
    r["status"] = ERROR
    r["errorCode"] = code
    r["message"] = message
    return r
end

local function invalid(message)
    return errorResponse("INVALID_PARAMETER", message)
end

local function notFound()
    return errorResponse("TX_NOT_FOUND", "TX not found")
end

local function withSignal(r, signal, childCount)
    if signal ~= nil then
        r["signal"] = signal
        if childCount ~= nil then
            r["childCount"] = childCount
        end
    end
    return r
end

---------------------------------------------------------------------------------------------------------------------
-- argument checks (each returns an error response or nil, so that a function's checks chain with `or` in order)
---------------------------------------------------------------------------------------------------------------------

-- INVALID_ARGUMENT "<name> must be <what>" when convert(v) is nil (or the value fails `accept`), else nil
local function checkAs(v, name, convert, what, accept)
    local x = convert(v)
    if x == nil or (accept ~= nil and not accept(x)) then
        return invalid(name .. " must be " .. what)
    end
    return nil
end

local function isNonNegative(n)
    return n >= 0
end

local function checkNonNegative(v, name)
    return checkAs(v, name, toInt, "a non-negative integer", isNonNegative)
end

local function checkInt(v, name)
    return checkAs(v, name, toInt, "an integer")
end

local function checkBool(v, name)
    return checkAs(v, name, toBool, "a boolean")
end

local function checkHeights(height, retention)
    return checkNonNegative(height, "currentBlockHeight") or checkNonNegative(retention, "blockHeightRetention")
end

local function checkHash(v, name)
    if not isBytesOfSize(v, HASH_SIZE) then
        return invalid(name .. " must be " .. HASH_SIZE .. " bytes")
    end
    return nil
end

local function checkSpendingData(v, name)
    if not isBytesOfSize(v, SPENDING_DATA_SIZE) then
        return invalid(name .. " must be " .. SPENDING_DATA_SIZE .. " bytes")
    end
    return nil
end

local function checkNotFrozenMarker(data, name)
    if isFrozenMarker(data, 1) then
        return invalid(name .. " is the frozen marker")
    end
    return nil
end

---------------------------------------------------------------------------------------------------------------------
-- record state
---------------------------------------------------------------------------------------------------------------------

local function intBin(rec, name)
    return toInt(rec[name]) or 0
end

local function isPagination(rec)
    return rec[B_TOTAL_EXTRA_RECS] == nil
end

local function hasReassignments(rec)
    local n = listSize(rec[B_REASSIGNMENTS])
    return n ~= nil and n > 0
end

-- Every stored slot of this record is spent, and none was ever reassigned (a reassigned output keeps the record
-- from ever counting as fully spent).
local function recordFullySpent(rec)
    return intBin(rec, B_SPENT_UTXOS) >= intBin(rec, B_RECORD_UTXOS) and not hasReassignments(rec)
end

local function isMinedOnLongestChain(rec)
    local n = listSize(rec[B_BLOCK_IDS])
    return n ~= nil and n > 0 and rec[B_UNMINED_SINCE] == nil
end

local function childCountOf(rec)
    return toInt(rec[B_TOTAL_EXTRA_RECS])
end

-- The DAH rule (docs/udf.md), applied after every state change. Mutates rec; returns signal, childCount and
-- whether it changed a bin.
local function applyDah(rec, height, retention)
    if retention == 0 then
        return nil, nil, false
    end
    if rec[B_PRESERVE_UNTIL] ~= nil then
        return nil, nil, false
    end
    if flag(rec[B_DELETING]) then
        -- cleanup committed the delete: the DAH is how the next pass finds and finishes it, so it stays
        return nil, nil, false
    end

    local existing = toInt(rec[B_DAH])
    local newDah = height + retention
    local external = flag(rec[B_EXTERNAL])

    if flag(rec[B_CONFLICTING]) then
        if rec[B_DAH] == nil then
            rec[B_DAH] = newDah
            if external then
                return DAHSET, childCountOf(rec), true
            end
            return nil, nil, true
        end
        return nil, nil, false
    end

    if isPagination(rec) then
        local last = rec[B_LAST_SPENT_STATE]
        if last ~= ALLSPENT and last ~= NOTALLSPENT then
            -- the state the record was created in: a record without stored outputs starts fully spent
            if intBin(rec, B_RECORD_UTXOS) == 0 then
                last = ALLSPENT
            else
                last = NOTALLSPENT
            end
        end
        local current = NOTALLSPENT
        if recordFullySpent(rec) then
            current = ALLSPENT
        end
        local changed = false
        if rec[B_LAST_SPENT_STATE] ~= current then
            rec[B_LAST_SPENT_STATE] = current
            changed = true
        end
        if current ~= last then
            return current, nil, changed
        end
        return nil, nil, changed
    end

    local deletable = recordFullySpent(rec)
        and intBin(rec, B_SPENT_EXTRA_RECS) >= intBin(rec, B_TOTAL_EXTRA_RECS)
        and isMinedOnLongestChain(rec)
        and not flag(rec[B_LOCKED])
        and not flag(rec[B_CREATING])

    if deletable then
        if existing == nil or existing < newDah then
            rec[B_DAH] = newDah
            if external then
                return DAHSET, childCountOf(rec), true
            end
            return nil, nil, true
        end
    elseif rec[B_DAH] ~= nil then
        rec[B_DAH] = nil
        if external then
            return DAHUNSET, childCountOf(rec), true
        end
        return nil, nil, true
    end
    return nil, nil, false
end

-- Runs the DAH rule, writes the record when anything changed, and returns `response` with the rule's signal.
local function finish(rec, response, height, retention, dirty)
    local signal, childCount, changed = applyDah(rec, height, retention)
    if dirty or changed then
        aerospike:update(rec)
    end
    return withSignal(response, signal, childCount)
end

-- The slot at a 0-based offset, checked against the expected UTXO hash.
-- Returns slot, nil or nil, errorCode, message.
local function checkedSlot(utxos, n, offset, utxoHash)
    if offset >= n then
        return nil, "UTXO_NOT_FOUND", "UTXO not found for offset " .. offset
    end
    local slot = utxos[offset + 1]
    if slot == nil then
        return nil, "UTXO_NOT_FOUND", "UTXO not found for offset " .. offset
    end
    local size = bytesSize(slot)
    if size ~= HASH_SIZE and size ~= SPENT_SIZE then
        return nil, "UTXO_INVALID_SIZE", "UTXO at offset " .. offset .. " has an invalid size"
    end
    if not bytesEqual(slot, 1, utxoHash, 1, HASH_SIZE) then
        return nil, "UTXO_HASH_MISMATCH", "UTXO hash mismatch at offset " .. offset
    end
    return slot, nil, nil
end

-- The record's utxos list and its size, or nil, errorResponse.
local function utxosOf(rec)
    local utxos = rec[B_UTXOS]
    local n = listSize(utxos)
    if n == nil then
        return nil, nil, errorResponse("UTXOS_NOT_FOUND", "UTXOs list not found")
    end
    return utxos, n, nil
end

-- The record's utxos list and the checked slot at a 0-based offset, or nil, nil, errorResponse.
local function slotOf(rec, offset, utxoHash)
    local utxos, n, missing = utxosOf(rec)
    if missing then
        return nil, nil, missing
    end
    local slot, code, message = checkedSlot(utxos, n, offset, utxoHash)
    if slot == nil then
        return nil, nil, errorResponse(code, message)
    end
    return utxos, slot, nil
end

-- Record checks, each an error response or nil like the argument checks; checkLive goes first (the others read
-- bins of a record that must exist).
local function checkLive(rec)
    if not isLive(rec) then
        return notFound()
    end
    return nil
end

local function checkNotCreating(rec)
    if flag(rec[B_CREATING]) then
        return errorResponse("CREATING", "TX is being created and cannot be spent yet")
    end
    return nil
end

local function checkNotDeleting(rec)
    if flag(rec[B_DELETING]) then
        return errorResponse("DELETING", "TX is being deleted")
    end
    return nil
end

-- finish with an OK response, the heights given as the function's (checked) arguments.
local function finishOk(rec, currentBlockHeight, retention, dirty)
    return finish(rec, okResponse(), toInt(currentBlockHeight), toInt(retention), dirty)
end

---------------------------------------------------------------------------------------------------------------------
-- implementations
---------------------------------------------------------------------------------------------------------------------

-- One spend item, checked: the item, or nil and an INVALID_PARAMETER response naming the item's field (the names are
-- strings built only for an item that fails: built per input they were measurable).
local function checkedItem(i, offset, o, utxoHash, data)
    if o == nil or o < 0 or not isBytesOfSize(utxoHash, HASH_SIZE) or not isBytesOfSize(data, SPENDING_DATA_SIZE)
        or isFrozenMarker(data, 1) then
        local at = "spends[" .. (i - 1) .. "]"
        return nil, checkNonNegative(offset, at .. ".offset")
            or checkHash(utxoHash, at .. ".utxoHash")
            or checkSpendingData(data, at .. ".spendingData")
            or checkNotFrozenMarker(data, at .. ".spendingData")
    end
    return { offset = o, utxoHash = utxoHash, spendingData = data }, nil
end

local SPEND_ITEM_SIZE = 4 + HASH_SIZE + SPENDING_DATA_SIZE

-- An item's fields in the bytes form: offset (as given and as an integer), utxoHash, spendingData.
local function bytesItemFields(spends, i)
    local at = (i - 1) * SPEND_ITEM_SIZE + 1
    local o = bytes.get_int32_le(spends, at)
    return o, o, bytes.get_bytes(spends, at + 4, HASH_SIZE),
        bytes.get_bytes(spends, at + 4 + HASH_SIZE, SPENDING_DATA_SIZE)
end

-- An item's fields in the list form, or nil, nil, nil, nil and the error response when the item is not a map.
local function mapItemFields(spends, i)
    local item = spends[i]
    if mapSize(item) == nil then
        return nil, nil, nil, nil, invalid("spends[" .. (i - 1) .. "] must be a map")
    end
    local offset = item["offset"]
    return offset, toInt(offset), item["utxoHash"], item["spendingData"]
end

-- spendMulti's items, from either form of `spends` (docs/udf.md): a list of maps {offset, utxoHash, spendingData}, or
-- bytes of SPEND_ITEM_SIZE-byte items (offset uint32 LE || utxoHash || spendingData), which the store sends: one
-- bytes value per record instead of a map per input for the client and the server to convert. Returns items, or nil
-- and the error response.
local function spendItemsOf(spends)
    local size = bytesSize(spends)
    local count, fieldsOf
    if size == nil then
        count, fieldsOf = listSize(spends), mapItemFields
    elseif size % SPEND_ITEM_SIZE ~= 0 then
        return nil, invalid("spends must be a multiple of " .. SPEND_ITEM_SIZE .. " bytes")
    else
        count, fieldsOf = size // SPEND_ITEM_SIZE, bytesItemFields
    end
    local items = {}
    for i = 1, count do
        local offset, o, utxoHash, data, bad = fieldsOf(spends, i)
        if bad == nil then
            items[i], bad = checkedItem(i, offset, o, utxoHash, data)
        end
        if bad then
            return nil, bad
        end
    end
    return items, nil
end

local function spendMultiImpl(rec, spends, ignoreConflicting, ignoreLocked, currentBlockHeight, retention)
    if bytesSize(spends) == nil and listSize(spends) == nil then
        return invalid("spends must be a list or bytes")
    end
    local bad = checkBool(ignoreConflicting, "ignoreConflicting")
        or checkBool(ignoreLocked, "ignoreLocked")
        or checkHeights(currentBlockHeight, retention)
    if bad then
        return bad
    end
    local ignoreC, ignoreL = toBool(ignoreConflicting), toBool(ignoreLocked)
    local height = toInt(currentBlockHeight)
    local R = toInt(retention)
    local items
    items, bad = spendItemsOf(spends)
    if bad then
        return bad
    end
    local count = #items

    bad = checkLive(rec) or checkNotCreating(rec) or checkNotDeleting(rec)
    if bad then
        return bad
    end
    if not ignoreC and flag(rec[B_CONFLICTING]) then
        return errorResponse("CONFLICTING", "TX is conflicting")
    end
    if not ignoreL and flag(rec[B_LOCKED]) then
        return errorResponse("LOCKED", "TX is locked and cannot be spent")
    end
    local spendingHeight = toInt(rec[B_SPENDING_HEIGHT])
    if spendingHeight ~= nil and spendingHeight > height then
        return errorResponse(
            "COINBASE_IMMATURE",
            "Coinbase UTXO can only be spent when it matures, spendable in block "
                .. spendingHeight
                .. " or greater; current block height is "
                .. height
        )
    end
    local utxos, n, missing = utxosOf(rec)
    if missing then
        return missing
    end

    local spendableIn = rec[B_SPENDABLE_IN]
    if mapSize(spendableIn) == nil then
        spendableIn = nil
    end
    local deletedChildren = rec[B_DELETED_CHILDREN]
    if mapSize(deletedChildren) == nil then
        deletedChildren = nil
    end

    local errors = map()
    local errorCount = 0
    local spent = 0
    local unchanged = list()
    local function itemError(i, code, message, slot)
        local e = map()
        e["errorCode"] = code
        e["message"] = message
        if slot ~= nil then
            e["spendingData"] = spendingDataOf(slot)
        end
        errors[i - 1] = e
        errorCount = errorCount + 1
    end

    for i = 1, count do
        local item = items[i]
        local offset = item.offset
        local slot, code, message = checkedSlot(utxos, n, offset, item.utxoHash)
        if slot == nil then
            itemError(i, code, message, nil)
        else
            local spendableAt = nil
            if spendableIn ~= nil then
                spendableAt = toInt(mapGetInt(spendableIn, offset))
            end
            if spendableAt ~= nil and spendableAt > height then
                itemError(i, "FROZEN_UNTIL", "UTXO is not spendable until block " .. spendableAt, nil)
            elseif bytesSize(slot) == SPENT_SIZE then
                if bytesEqual(slot, HASH_SIZE + 1, item.spendingData, 1, SPENDING_DATA_SIZE) then
                    -- already spent by this spender: success without change, unless that child was deleted
                    if deletedChildren ~= nil and deletedChildren[spenderTxidHex(slot)] ~= nil then
                        itemError(i, "INVALID_SPEND", "Invalid spend: spending tx " .. spenderTxidHex(slot)
                            .. " was deleted", slot)
                    else
                        -- not written by this call: a rollback of this call must leave it spent
                        list.append(unchanged, i - 1)
                    end
                elseif isFrozenMarker(slot, HASH_SIZE + 1) then
                    itemError(i, "FROZEN", "UTXO is frozen", nil)
                else
                    itemError(i, "SPENT", "Already spent by " .. spenderText(slot), slot)
                end
            else
                utxos[offset + 1] = newSlot(slot, item.spendingData)
                spent = spent + 1
            end
        end
    end

    local response
    if errorCount > 0 then
        response = map()
        response["status"] = ERROR
        response["errors"] = errors
    else
        response = okResponse()
    end
    if list.size(unchanged) > 0 then
        response["unchanged"] = unchanged
    end
    local blockIDs = rec[B_BLOCK_IDS]
    if listSize(blockIDs) ~= nil then
        response["blockIDs"] = blockIDs
    end

    if spent > 0 then
        rec[B_UTXOS] = utxos
        rec[B_SPENT_UTXOS] = intBin(rec, B_SPENT_UTXOS) + spent
    elseif list.size(unchanged) > 0 then
        -- a retry answered "already spent by this spender" is written all the same (the same slots): the server sends
        -- a read no replica write, so the master alone would answer for a spend whose first replica write may never
        -- have arrived; written, it commits to every copy (commit-all) before it is acknowledged (decision 0009)
        rec[B_UTXOS] = utxos
    end
    return finish(rec, response, height, R, spent > 0 or list.size(unchanged) > 0)
end

local function unspendImpl(rec, offset, utxoHash, expected, currentBlockHeight, retention)
    local bad = checkNonNegative(offset, "offset")
        or checkHash(utxoHash, "utxoHash")
        or checkSpendingData(expected, "expectedSpendingData")
        or checkHeights(currentBlockHeight, retention)
        or checkLive(rec)
        or checkNotDeleting(rec)
    if bad then
        return bad
    end
    offset = toInt(offset)
    local utxos, slot, err = slotOf(rec, offset, utxoHash)
    if err then
        return err
    end
    local cleared = false
    if bytesSize(slot) == SPENT_SIZE then
        if isFrozenMarker(slot, HASH_SIZE + 1) then
            return errorResponse("FROZEN", "UTXO is frozen")
        end
        if bytesEqual(slot, HASH_SIZE + 1, expected, 1, SPENDING_DATA_SIZE) then
            cleared = true
            utxos[offset + 1] = newSlot(slot, nil)
            rec[B_UTXOS] = utxos
            local spent = intBin(rec, B_SPENT_UTXOS) - 1
            if spent < 0 then
                spent = 0
            end
            rec[B_SPENT_UTXOS] = spent
        end
    end
    -- a different spender or an unspent slot: nothing to clear (the DAH rule still runs)
    return finishOk(rec, currentBlockHeight, retention, cleared)
end

-- Rebuilds the three parallel block lists without the entries for blockID.
local function withoutBlock(rec, blockID)
    local ids = rec[B_BLOCK_IDS]
    local heights = rec[B_BLOCK_HEIGHTS]
    local idxs = rec[B_SUBTREE_IDXS]
    local newIds, newHeights, newIdxs = list(), list(), list()
    local n = listSize(ids) or 0
    local removed = false
    for i = 1, n do
        if toInt(ids[i]) == blockID then
            removed = true
        else
            list.append(newIds, ids[i])
            if listSize(heights) ~= nil then
                list.append(newHeights, heights[i])
            end
            if listSize(idxs) ~= nil then
                list.append(newIdxs, idxs[i])
            end
        end
    end
    if removed then
        rec[B_BLOCK_IDS] = newIds
        rec[B_BLOCK_HEIGHTS] = newHeights
        rec[B_SUBTREE_IDXS] = newIdxs
        return newIds
    end
    return ids
end

local function setMinedImpl(rec, blockID, blockHeight, subtreeIdx, currentBlockHeight, retention, onLongestChain,
                            unsetMined)
    local bad = checkInt(blockID, "blockID")
        or checkNonNegative(blockHeight, "blockHeight")
        or checkInt(subtreeIdx, "subtreeIdx")
        or checkHeights(currentBlockHeight, retention)
        or checkBool(onLongestChain, "onLongestChain")
        or checkBool(unsetMined, "unsetMined")
        or checkLive(rec)
        or checkNotDeleting(rec)
    if bad then
        return bad
    end
    local id, bh, st = toInt(blockID), toInt(blockHeight), toInt(subtreeIdx)
    local longest, unset = toBool(onLongestChain), toBool(unsetMined)
    local height = toInt(currentBlockHeight)
    local R = toInt(retention)

    local ids = rec[B_BLOCK_IDS]
    local before = listSize(ids) or 0
    if unset then
        ids = withoutBlock(rec, id)
    else
        local present = false
        for i = 1, before do
            if toInt(ids[i]) == id then
                present = true
                break
            end
        end
        if not present then
            local newIds, newHeights, newIdxs = copyList(ids), copyList(rec[B_BLOCK_HEIGHTS]),
                copyList(rec[B_SUBTREE_IDXS])
            list.append(newIds, id)
            list.append(newHeights, bh)
            list.append(newIdxs, st)
            rec[B_BLOCK_IDS] = newIds
            rec[B_BLOCK_HEIGHTS] = newHeights
            rec[B_SUBTREE_IDXS] = newIdxs
            ids = newIds
        end
    end
    local after = listSize(ids) or 0

    if after == 0 then
        -- not in any block: unmined (since the first height it was known unmined)
        if rec[B_UNMINED_SINCE] == nil then
            rec[B_UNMINED_SINCE] = height
        end
    elseif longest then
        if rec[B_UNMINED_SINCE] ~= nil then
            rec[B_UNMINED_SINCE] = nil
        end
    elseif before == 0 and rec[B_UNMINED_SINCE] == nil then
        -- mined only on a fork: still unmined on the longest chain, so never deletable
        rec[B_UNMINED_SINCE] = height
    end

    if flag(rec[B_LOCKED]) then
        rec[B_LOCKED] = false
    end
    if rec[B_CREATING] ~= nil then
        rec[B_CREATING] = nil
    end

    local response = okResponse()
    if after > 0 then
        response["blockIDs"] = copyList(ids)
    else
        response["blockIDs"] = list()
    end
    -- a block on the longest chain is stable from its own height on: never stamp a DAH below it
    local dahHeight = height
    if longest and not unset and bh > dahHeight then
        dahHeight = bh
    end
    local signal, childCount = applyDah(rec, dahHeight, R)
    aerospike:update(rec)
    withSignal(response, signal, childCount)
    -- the pagination records (setMined also finishes an unfinished multi-record create on them)
    local total = childCountOf(rec)
    if total ~= nil then
        response["childCount"] = total
    end
    return response
end

-- Common argument and slot checks of freeze / unfreeze / reassign. Returns utxos, slot, offset or nil, nil, nil,
-- errorResponse.
local function slotForAdmin(rec, offset, utxoHash, currentBlockHeight, retention)
    local bad = checkNonNegative(offset, "offset")
        or checkHash(utxoHash, "utxoHash")
        or checkHeights(currentBlockHeight, retention)
        or checkLive(rec)
    if bad then
        return nil, nil, nil, bad
    end
    local o = toInt(offset)
    local utxos, slot, err = slotOf(rec, o, utxoHash)
    return utxos, slot, o, err
end

local function freezeImpl(rec, offset, utxoHash, currentBlockHeight, retention)
    local utxos, slot, o, err = slotForAdmin(rec, offset, utxoHash, currentBlockHeight, retention)
    if err then
        return err
    end
    if bytesSize(slot) == SPENT_SIZE then
        if isFrozenMarker(slot, HASH_SIZE + 1) then
            return errorResponse("ALREADY_FROZEN", "UTXO is already frozen")
        end
        local r = errorResponse("SPENT", "Already spent by " .. spenderText(slot))
        r["spendingData"] = spendingDataOf(slot)
        return r
    end
    utxos[o + 1] = frozenSlot(slot)
    rec[B_UTXOS] = utxos
    return finishOk(rec, currentBlockHeight, retention, true)
end

-- slotForAdmin of an output that must be frozen: UTXO_NOT_FROZEN (with `notFrozen` as its message) otherwise
local function frozenSlotForAdmin(rec, offset, utxoHash, currentBlockHeight, retention, notFrozen)
    local utxos, slot, o, err = slotForAdmin(rec, offset, utxoHash, currentBlockHeight, retention)
    if err then
        return nil, nil, nil, err
    end
    if bytesSize(slot) ~= SPENT_SIZE or not isFrozenMarker(slot, HASH_SIZE + 1) then
        return nil, nil, nil, errorResponse("UTXO_NOT_FROZEN", notFrozen)
    end
    return utxos, slot, o, nil
end

local function unfreezeImpl(rec, offset, utxoHash, currentBlockHeight, retention)
    local utxos, slot, o, err = frozenSlotForAdmin(rec, offset, utxoHash, currentBlockHeight, retention,
        "UTXO is not frozen")
    if err then
        return err
    end
    utxos[o + 1] = newSlot(slot, nil)
    rec[B_UTXOS] = utxos
    return finishOk(rec, currentBlockHeight, retention, true)
end

local function reassignImpl(rec, offset, utxoHash, newUtxoHash, blockHeight, spendableAfter, currentBlockHeight,
                            retention)
    local bad = checkHash(newUtxoHash, "newUtxoHash")
        or checkNonNegative(blockHeight, "blockHeight")
        or checkNonNegative(spendableAfter, "spendableAfter")
    if bad then
        return bad
    end
    local bh, after = toInt(blockHeight), toInt(spendableAfter)
    local utxos, _, o, err = frozenSlotForAdmin(rec, offset, utxoHash, currentBlockHeight, retention,
        "UTXO is not frozen: only a frozen UTXO can be reassigned")
    if err then
        return err
    end

    utxos[o + 1] = newSlot(newUtxoHash, nil)
    rec[B_UTXOS] = utxos

    local reassignments = copyList(rec[B_REASSIGNMENTS])
    local entry = map()
    entry["offset"] = o
    entry["utxoHash"] = newSlot(utxoHash, nil)
    entry["newUtxoHash"] = newSlot(newUtxoHash, nil)
    entry["blockHeight"] = bh
    list.append(reassignments, entry)
    rec[B_REASSIGNMENTS] = reassignments

    local spendableIn = rec[B_SPENDABLE_IN]
    if mapSize(spendableIn) == nil then
        spendableIn = map()
    elseif spendableIn[tostring(o)] ~= nil then
        map.remove(spendableIn, tostring(o))
    end
    spendableIn[o] = bh + after
    rec[B_SPENDABLE_IN] = spendableIn

    return finishOk(rec, currentBlockHeight, retention, true)
end

-- setConflicting / setLocked: a boolean bin, then the DAH rule.
local function setFlagImpl(rec, bin, setValue, currentBlockHeight, retention)
    local bad = checkBool(setValue, "setValue") or checkHeights(currentBlockHeight, retention) or checkLive(rec)
    if bad then
        return bad
    end
    rec[bin] = toBool(setValue)
    local response = okResponse()
    local total = childCountOf(rec)
    if total ~= nil then
        response["childCount"] = total
    end
    return finish(rec, response, toInt(currentBlockHeight), toInt(retention), true)
end

local function preserveUntilImpl(rec, untilHeight, currentBlockHeight, retention)
    local bad = checkNonNegative(untilHeight, "untilHeight")
        or checkHeights(currentBlockHeight, retention)
        or checkLive(rec)
        -- cleanup finishes a marked delete without re-reading the record: a preserve must not report success
        or checkNotDeleting(rec)
    if bad then
        return bad
    end
    rec[B_PRESERVE_UNTIL] = toInt(untilHeight)
    if rec[B_DAH] ~= nil then
        rec[B_DAH] = nil
    end
    aerospike:update(rec)
    local response = okResponse()
    if flag(rec[B_EXTERNAL]) then
        -- pagination records and the blob keep their DAH until the reconciler clears them
        withSignal(response, PRESERVE, childCountOf(rec))
    end
    return response
end

local function expirePreserveImpl(rec, currentBlockHeight, retention)
    local bad = checkHeights(currentBlockHeight, retention) or checkLive(rec)
    if bad then
        return bad
    end
    local height = toInt(currentBlockHeight)
    local untilH = rec[B_PRESERVE_UNTIL]
    local removed = false
    if untilH ~= nil then
        local u = toInt(untilH)
        if u ~= nil and u > height then
            return okResponse()
        end
        rec[B_PRESERVE_UNTIL] = nil
        removed = true
    end
    return finishOk(rec, currentBlockHeight, retention, removed)
end

local function spentExtraRecsImpl(rec, value, isIncrement, currentBlockHeight, retention)
    local bad = checkInt(value, "value") or checkHeights(currentBlockHeight, retention) or checkLive(rec)
    if bad then
        return bad
    end
    local v = toInt(value)
    local total = toInt(rec[B_TOTAL_EXTRA_RECS])
    if total == nil then
        return invalid("totalExtraRecs not found in record: not a master record")
    end
    local spent
    if isIncrement then
        -- a drifted counter is clamped; the reconciler recounts it from the records
        spent = intBin(rec, B_SPENT_EXTRA_RECS) + v
        if spent < 0 then
            spent = 0
        elseif spent > total then
            spent = total
        end
    else
        if v < 0 or v > total then
            return invalid("spentExtraRecs must be within [0, totalExtraRecs = " .. total .. "]")
        end
        spent = v
    end
    rec[B_SPENT_EXTRA_RECS] = spent
    return finishOk(rec, currentBlockHeight, retention, true)
end

local function clearCreatingImpl(rec, currentBlockHeight, retention)
    local bad = checkHeights(currentBlockHeight, retention) or checkLive(rec)
    if bad then
        return bad
    end
    local wasCreating = rec[B_CREATING] ~= nil
    if wasCreating then
        rec[B_CREATING] = nil
    end
    return finishOk(rec, currentBlockHeight, retention, wasCreating)
end

local function addConflictingChildImpl(rec, childTxid)
    local bad = checkHash(childTxid, "childTxid") or checkLive(rec)
    if bad then
        return bad
    end
    local children = rec[B_CONFLICTING_CS]
    local n = listSize(children)
    if n ~= nil then
        for i = 1, n do
            local c = children[i]
            if bytesSize(c) == HASH_SIZE and bytesEqual(c, 1, childTxid, 1, HASH_SIZE) then
                return okResponse()
            end
        end
    end
    local updated = copyList(children)
    list.append(updated, newSlot(childTxid, nil))
    rec[B_CONFLICTING_CS] = updated
    aerospike:update(rec)
    return okResponse()
end

local function setDeletedChildImpl(rec, childHex)
    if type(childHex) ~= "string" or #childHex ~= 64 or string_find(childHex, "^[0-9a-fA-F]+$") == nil then
        return invalid("child txid must be 64 hex characters")
    end
    local bad = checkLive(rec)
    if bad then
        return bad
    end
    local key = string_lower(childHex)
    local children = rec[B_DELETED_CHILDREN]
    if mapSize(children) == nil then
        children = map()
    elseif children[key] == true then
        return okResponse()
    end
    children[key] = true
    rec[B_DELETED_CHILDREN] = children
    aerospike:update(rec)
    return okResponse()
end

-- Cleanup's phase-1 mark: `deleting = true` unless the record was written since cleanup read it (its generation is
-- not `expectedGeneration`). The check is here, not in a write policy, so that a batch of marks is one batch UDF
-- command: a batch write cannot carry an expected generation per record in the node client.
local function markDeletingImpl(rec, expectedGeneration)
    local expected = toInt(expectedGeneration)
    if expected == nil or expected < 0 then
        return invalid("expectedGeneration must be a non-negative integer")
    end
    local bad = checkLive(rec)
    if bad then
        return bad
    end
    if record.gen(rec) ~= expected then
        return errorResponse("CHANGED", "the record was written since it was read")
    end
    rec[B_DELETING] = true
    aerospike:update(rec)
    return okResponse()
end

local function rerunDahImpl(rec, currentBlockHeight, retention)
    local bad = checkHeights(currentBlockHeight, retention) or checkLive(rec)
    if bad then
        return bad
    end
    return finishOk(rec, currentBlockHeight, retention, false)
end

-- Marks a tx on or off the longest chain without touching its block lists (a reorg moves txs on and off the longest
-- chain while their blocks stay known). Off: unminedSince = currentBlockHeight unless already set. On: unminedSince
-- removed, but only when the tx is in at least one block (a tx in no block stays unmined). Then the DAH rule.
local function setLongestChainImpl(rec, onLongestChain, currentBlockHeight, retention)
    local bad = checkBool(onLongestChain, "onLongestChain") or checkHeights(currentBlockHeight, retention)
        or checkLive(rec)
    if bad then
        return bad
    end
    if isPagination(rec) then
        return invalid("setLongestChain applies to a master record only")
    end
    bad = checkNotDeleting(rec)
    if bad then
        return bad
    end
    local longest = toBool(onLongestChain)
    local height = toInt(currentBlockHeight)
    local dirty = false
    if longest then
        local blocks = listSize(rec[B_BLOCK_IDS]) or 0
        if blocks > 0 and rec[B_UNMINED_SINCE] ~= nil then
            rec[B_UNMINED_SINCE] = nil
            dirty = true
        end
    elseif rec[B_UNMINED_SINCE] == nil then
        rec[B_UNMINED_SINCE] = height
        dirty = true
    end
    return finishOk(rec, currentBlockHeight, retention, dirty)
end

-- Moves one output to a new spender in one atomic step (double-spend resolution): the slot held by
-- expectedSpendingData (the losing spender) or by spendingData itself (a retry) ends up held by spendingData; an
-- unspent slot is spent by spendingData. The output is never unspent in between, so no third tx can take it. Another
-- spender -> SPENT (with its spendingData), a frozen output -> FROZEN; neither writes.
local function replaceSpendImpl(rec, offset, utxoHash, spendingData, expected, currentBlockHeight, retention)
    local bad = checkNonNegative(offset, "offset")
        or checkHash(utxoHash, "utxoHash")
        or checkSpendingData(spendingData, "spendingData")
        or checkSpendingData(expected, "expectedSpendingData")
        or checkHeights(currentBlockHeight, retention)
        or checkNotFrozenMarker(spendingData, "spendingData")
        or checkLive(rec)
        or checkNotCreating(rec)
        or checkNotDeleting(rec)
    if bad then
        return bad
    end
    offset = toInt(offset)
    local utxos, slot, err = slotOf(rec, offset, utxoHash)
    if err then
        return err
    end
    if bytesSize(slot) == SPENT_SIZE then
        if bytesEqual(slot, HASH_SIZE + 1, spendingData, 1, SPENDING_DATA_SIZE) then
            return finishOk(rec, currentBlockHeight, retention, false)
        end
        if isFrozenMarker(slot, HASH_SIZE + 1) then
            return errorResponse("FROZEN", "UTXO is frozen")
        end
        if not bytesEqual(slot, HASH_SIZE + 1, expected, 1, SPENDING_DATA_SIZE) then
            local r = errorResponse("SPENT", "Already spent by " .. spenderText(slot))
            r["spendingData"] = spendingDataOf(slot)
            return r
        end
    else
        rec[B_SPENT_UTXOS] = intBin(rec, B_SPENT_UTXOS) + 1
    end
    utxos[offset + 1] = newSlot(slot, spendingData)
    rec[B_UTXOS] = utxos
    return finishOk(rec, currentBlockHeight, retention, true)
end

-- Runs an implementation; an unexpected Lua error becomes an ERROR map instead of failing the call.
local function guarded(impl, ...)
    local ok, result = pcall(impl, ...)
    if ok then
        return result
    end
    return invalid("unexpected error: " .. tostring(result))
end

---------------------------------------------------------------------------------------------------------------------
-- exported functions (lib/domain/udf.ts)
---------------------------------------------------------------------------------------------------------------------

function spendMulti(rec, spends, ignoreConflicting, ignoreLocked, currentBlockHeight, blockHeightRetention)
    return guarded(spendMultiImpl, rec, spends, ignoreConflicting, ignoreLocked, currentBlockHeight,
        blockHeightRetention)
end

function spend(rec, offset, utxoHash, spendingData, ignoreConflicting, ignoreLocked, currentBlockHeight,
               blockHeightRetention)
    local item = map()
    item["offset"] = offset
    item["utxoHash"] = utxoHash
    item["spendingData"] = spendingData
    local spends = list()
    list.append(spends, item)
    local response = guarded(spendMultiImpl, rec, spends, ignoreConflicting, ignoreLocked, currentBlockHeight,
        blockHeightRetention)
    -- the one item's error is also the call's error
    local errors = response["errors"]
    if errors ~= nil then
        local e = errors[0]
        if e ~= nil then
            response["errorCode"] = e["errorCode"]
            response["message"] = e["message"]
        end
    end
    return response
end

function unspend(rec, offset, utxoHash, expectedSpendingData, currentBlockHeight, blockHeightRetention)
    return guarded(unspendImpl, rec, offset, utxoHash, expectedSpendingData, currentBlockHeight,
        blockHeightRetention)
end

function setMined(rec, blockID, blockHeight, subtreeIdx, currentBlockHeight, blockHeightRetention, onLongestChain,
                  unsetMined)
    return guarded(setMinedImpl, rec, blockID, blockHeight, subtreeIdx, currentBlockHeight, blockHeightRetention,
        onLongestChain, unsetMined)
end

function freeze(rec, offset, utxoHash, currentBlockHeight, blockHeightRetention)
    return guarded(freezeImpl, rec, offset, utxoHash, currentBlockHeight, blockHeightRetention)
end

function unfreeze(rec, offset, utxoHash, currentBlockHeight, blockHeightRetention)
    return guarded(unfreezeImpl, rec, offset, utxoHash, currentBlockHeight, blockHeightRetention)
end

function reassign(rec, offset, utxoHash, newUtxoHash, blockHeight, spendableAfter, currentBlockHeight,
                  blockHeightRetention)
    return guarded(reassignImpl, rec, offset, utxoHash, newUtxoHash, blockHeight, spendableAfter, currentBlockHeight,
        blockHeightRetention)
end

function setConflicting(rec, setValue, currentBlockHeight, blockHeightRetention)
    return guarded(setFlagImpl, rec, B_CONFLICTING, setValue, currentBlockHeight, blockHeightRetention)
end

function setLocked(rec, setValue, currentBlockHeight, blockHeightRetention)
    return guarded(setFlagImpl, rec, B_LOCKED, setValue, currentBlockHeight, blockHeightRetention)
end

function preserveUntil(rec, untilHeight, currentBlockHeight, blockHeightRetention)
    return guarded(preserveUntilImpl, rec, untilHeight, currentBlockHeight, blockHeightRetention)
end

function expirePreserve(rec, currentBlockHeight, blockHeightRetention)
    return guarded(expirePreserveImpl, rec, currentBlockHeight, blockHeightRetention)
end

function incrementSpentExtraRecs(rec, inc, currentBlockHeight, blockHeightRetention)
    return guarded(spentExtraRecsImpl, rec, inc, true, currentBlockHeight, blockHeightRetention)
end

function setSpentExtraRecs(rec, value, currentBlockHeight, blockHeightRetention)
    return guarded(spentExtraRecsImpl, rec, value, false, currentBlockHeight, blockHeightRetention)
end

function clearCreating(rec, currentBlockHeight, blockHeightRetention)
    return guarded(clearCreatingImpl, rec, currentBlockHeight, blockHeightRetention)
end

function addConflictingChild(rec, childTxid)
    return guarded(addConflictingChildImpl, rec, childTxid)
end

function setDeletedChild(rec, childTxidDisplayHex)
    return guarded(setDeletedChildImpl, rec, childTxidDisplayHex)
end

function markDeleting(rec, expectedGeneration)
    return guarded(markDeletingImpl, rec, expectedGeneration)
end

function rerunDah(rec, currentBlockHeight, blockHeightRetention)
    return guarded(rerunDahImpl, rec, currentBlockHeight, blockHeightRetention)
end

function setLongestChain(rec, onLongestChain, currentBlockHeight, blockHeightRetention)
    return guarded(setLongestChainImpl, rec, onLongestChain, currentBlockHeight, blockHeightRetention)
end

function replaceSpend(rec, offset, utxoHash, spendingData, expectedSpendingData, currentBlockHeight,
                      blockHeightRetention)
    return guarded(replaceSpendImpl, rec, offset, utxoHash, spendingData, expectedSpendingData, currentBlockHeight,
        blockHeightRetention)
end
