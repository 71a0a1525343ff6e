-- GPU time per kernel, as `nsys stats --report cuda_gpu_kern_sum` computes it, in plain SQLite (window
-- functions for the median; the sample standard deviation): written against nsys's tables only, so it
-- runs on an `nsys export --type sqlite` database and on `cuscope export --format sqlite` alike.
--   sqlite3 -header -csv run.sqlite < examples/sql/cuda_gpu_kern_sum.sql
-- Names: shortName (as --kernel-names base); demangledName or mangledName for the other styles.
WITH kern AS (
    SELECT s.value AS name, k."end" - k.start AS dur
    FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
    LEFT JOIN StringIds AS s ON s.id = k.shortName),
  ranked AS (
    SELECT name, dur,
           ROW_NUMBER() OVER (PARTITION BY name ORDER BY dur) AS rn,
           COUNT(*) OVER (PARTITION BY name) AS n,
           AVG(dur) OVER (PARTITION BY name) AS mean
    FROM kern),
  summary AS (
    SELECT name, SUM(dur) AS total, COUNT(*) AS num, AVG(dur) AS avg,
           AVG(CASE WHEN rn IN ((n + 1) / 2, (n + 2) / 2) THEN dur END) AS med,
           MIN(dur) AS min, MAX(dur) AS max,
           CASE WHEN COUNT(*) > 1 THEN SUM((dur - mean) * (dur - mean)) / (COUNT(*) - 1)
                ELSE 0 END AS var
    FROM ranked GROUP BY name)
SELECT round(total * 100.0 / (SELECT sum(total) FROM summary), 1) AS "Time (%)",
       total AS "Total Time (ns)", num AS "Instances",
       round(avg, 1) AS "Avg (ns)", round(med, 1) AS "Med (ns)",
       min AS "Min (ns)", max AS "Max (ns)", round(sqrt(var), 1) AS "StdDev (ns)",
       name AS "Name"
FROM summary ORDER BY 2 DESC, 3, 9;
