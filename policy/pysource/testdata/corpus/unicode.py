# -*- coding: utf-8 -*-
π = 3.14
register_cpu_ci(1, "stage-a-cpu", disabled="naïve — ünïcode ✓")
名前 = "register_cpu_ci(1, 's')"
