-- Cycles through QUERIES_FILE's lines (one query a line), each a GET of
-- /api/search?q=<query>; every thread of wrk starts at another line.
local queries = {}
local counter = 0
local function enc(s)
  return (s:gsub("[^%w%-_%.~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end
for line in io.lines(os.getenv("QUERIES_FILE")) do
  if line ~= "" then table.insert(queries, "/api/search?q=" .. enc(line)) end
end
local errors = 0
function setup(thread)
  counter = counter + 1
  thread:set("offset", counter * 7)
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
