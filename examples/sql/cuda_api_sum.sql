-- Time per CUDA API function (runtime and driver), as `nsys stats --report cuda_api_sum` computes it,
-- against nsys's tables only. nsys keeps CUPTI's _vNNNN suffixes in the names and strips them here;
-- cuscope's names have none.
--   sqlite3 -header -csv run.sqlite < examples/sql/cuda_api_sum.sql
WITH ranked AS (
    SELECT nameId, "end" - start AS dur,
           ROW_NUMBER() OVER (PARTITION BY nameId ORDER BY "end" - start) AS rn,
           COUNT(*) OVER (PARTITION BY nameId) AS n,
           AVG("end" - start) OVER (PARTITION BY nameId) AS mean
    FROM CUPTI_ACTIVITY_KIND_RUNTIME),
  summary AS (
    SELECT nameId, SUM(dur) AS total, COUNT(*) AS num, AVG(dur) AS avg,
           AVG(CASE WHEN rn IN ((n + 1) / 2, (n + 2) / 2) THEN dur END) AS med,
           MIN(dur) AS min, MAX(dur) AS max,
           CASE WHEN COUNT(*) > 1 THEN SUM((dur - mean) * (dur - mean)) / (COUNT(*) - 1)
                ELSE 0 END AS var
    FROM ranked GROUP BY nameId)
SELECT round(total * 100.0 / (SELECT sum(total) FROM summary), 1) AS "Time (%)",
       total AS "Total Time (ns)", num AS "Num Calls",
       round(avg, 1) AS "Avg (ns)", round(med, 1) AS "Med (ns)",
       min AS "Min (ns)", max AS "Max (ns)", round(sqrt(var), 1) AS "StdDev (ns)",
       CASE substr(ids.value, -6, 2) WHEN '_v'
            THEN substr(ids.value, 1, length(ids.value) - 6) ELSE ids.value END AS "Name"
FROM summary LEFT JOIN StringIds AS ids ON ids.id = summary.nameId
ORDER BY 2 DESC, 9;
