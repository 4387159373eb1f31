-- Cycles through QUERIES_FILE's lines (one query a line), each a GET of
-- /api/search?q=<query> (plus QUERY_SUFFIX, e.g. "&facets=1" for the
-- faceted runs); every thread of wrk starts at another line.
local queries = {}
local suffix = os.getenv("QUERY_SUFFIX") or ""
local counter = 0
local function enc(s)
  return (s:gsub("[^%w%-_%.~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end
for line in io.lines(os.getenv("QUERIES_FILE")) do
  if line ~= "" then table.insert(queries, "/api/search?q=" .. enc(line) .. suffix) end
end
local threads = {}
function setup(thread)
  counter = counter + 1
  thread:set("offset", counter * 7)
  thread:set("errors", 0)
  table.insert(threads, thread)
end
function init(args)
  i = offset or 0
end
function request()
  i = i + 1
  return wrk.format("GET", queries[(i % #queries) + 1])
end
function response(status, headers, body)
  if status ~= 200 then errors = errors + 1 end
end
-- Every thread's count of answers other than 200, on its own line (wrk
-- itself only counts statuses outside 2xx/3xx).
function done(summary, latency, requests)
  local n = 0
  for _, t in ipairs(threads) do n = n + t:get("errors") end
  io.write(string.format("non-200 answers: %d\n", n))
end
